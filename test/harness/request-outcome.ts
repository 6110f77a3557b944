/** What the API server answered a request: 200 on success, else the HTTP status and its message. */
export interface RequestOutcome {
  code: number;
  message: string;
}

/**
 * Resolves to 200 on success, else the HTTP status and the server's message (the body as
 * text), so a test can assert on a refusal as the server gave it.
 */
export async function requestOutcome(request: Promise<unknown>): Promise<RequestOutcome> {
  try {
    await request;
    return { code: 200, message: "" };
  } catch (error) {
    const e = error as { code?: number; body?: unknown };
    const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body ?? String(error));
    return { code: e.code ?? 0, message: body };
  }
}
