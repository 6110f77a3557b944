import { describe, expect, it } from "vitest";
import { paint, renderTable } from "./table.js";

describe("renderTable", () => {
  it("aligns, leaves the last column unpadded and keeps each row on one line", () => {
    expect(
      renderTable(
        ["A", "BB", "C"],
        [
          ["xxx", "y", "multi\nline"],
          ["", "", ""],
        ],
      ),
    ).toBe("A    BB  C\nxxx  y   multi line\n\n");
  });

  it("colours only when asked, and pads before colouring so columns stay aligned", () => {
    const plain = renderTable(
      ["ACTION", "WHY"],
      [
        ["Delete", "r"],
        ["Create", "s"],
      ],
    );
    expect(plain).not.toContain("\u001b[");
    const coloured = renderTable(
      ["ACTION", "WHY"],
      [
        ["Delete", "r"],
        ["Create", "s"],
      ],
      { color: true, colourColumns: [0] },
    );
    expect(coloured).toBe("ACTION  WHY\n\u001b[31mDelete\u001b[39m  r\n\u001b[32mCreate\u001b[39m  s\n");
    // The header is never coloured; stripping the codes gives the plain table.
    expect(coloured.replaceAll("\u001b[31m", "").replaceAll("\u001b[32m", "").replaceAll("\u001b[39m", "")).toBe(plain);
  });

  it("paint is the identity when disabled or without a colour", () => {
    expect(paint("x", "red", false)).toBe("x");
    expect(paint("x", undefined, true)).toBe("x");
  });
});
