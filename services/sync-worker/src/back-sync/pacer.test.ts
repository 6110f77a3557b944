import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Pacer } from "./pacer.js";

describe("Pacer", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("fires the first change at once and folds a burst into one firing at the interval's end", () => {
    let fired = 0;
    const pacer = new Pacer(() => fired++, 1_000);
    pacer.changed();
    expect(fired).toBe(1);
    for (let i = 0; i < 100; i++) pacer.changed();
    expect(fired).toBe(1);
    vi.advanceTimersByTime(999);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(2);
    vi.advanceTimersByTime(5_000);
    expect(fired).toBe(2);
  });

  it("fires at once again after a quiet interval", () => {
    let fired = 0;
    const pacer = new Pacer(() => fired++, 1_000);
    pacer.changed();
    vi.advanceTimersByTime(1_500);
    pacer.changed();
    expect(fired).toBe(2);
  });

  it("fires nothing once stopped, a pending firing included", () => {
    let fired = 0;
    const pacer = new Pacer(() => fired++, 1_000);
    pacer.changed();
    pacer.changed();
    pacer.stop();
    vi.advanceTimersByTime(2_000);
    pacer.changed();
    expect(fired).toBe(1);
  });
});
