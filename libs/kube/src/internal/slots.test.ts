import { describe, expect, it } from "vitest";
import { Slots } from "./slots.js";

describe("Slots", () => {
  it("holds at most max at once and hands slots over in arrival order", async () => {
    const slots = new Slots(2);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    const gates: (() => void)[] = [];
    const runs = Array.from({ length: 6 }, (_, i) =>
      slots.run(async () => {
        inside++;
        most = Math.max(most, inside);
        order.push(i);
        await new Promise<void>((r) => gates.push(r));
        inside--;
        return i;
      }),
    );
    for (let opened = 0; opened < 6; opened++) {
      await new Promise((r) => setTimeout(r, 1));
      gates.shift()!();
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("frees the slot when the work throws", async () => {
    const slots = new Slots(1);
    await expect(slots.run(() => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(await slots.run(async () => "next")).toBe("next");
  });
});
