// A fetch with a deadline and a size cap for the deployment check: a server that streams without end, or never
// finishes its answer, ends in a clear error instead of a check that grows without bound or waits forever.

const MAX_BODY_BYTES = 1024 * 1024;
/** Statuses whose answers carry no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/** Wraps `base`: each request and its whole body within `timeoutMs`, the body at most 1 MiB, read before returning. */
export function boundedFetch(base: typeof fetch, timeoutMs: number): typeof fetch {
  return async (input, init) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (error) {
      if (signal.aborted) throw new Error(`no answer within ${timeoutMs} ms`);
      throw error;
    }
    if (!response.body || NO_BODY.has(response.status)) {
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_BODY_BYTES) throw new Error(`the answer is larger than ${MAX_BODY_BYTES} bytes`);
        chunks.push(value);
      }
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      if (signal.aborted) throw new Error(`the answer did not finish within ${timeoutMs} ms`);
      throw error;
    }
    return new Response(Buffer.concat(chunks), { status: response.status, headers: response.headers });
  };
}
