/** A tenant object whose shape tenantplane cannot translate; `path` names the offending field. */
export class MalformedObjectError extends Error {
  override readonly name = "MalformedObjectError";

  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(path === "" ? problem : `${path}: ${problem}`);
  }
}
