// Waiting for a realtime event in the events a test client collected, shared by the tests that
// drive the OpenAI SDK's realtime client.

/**
 * Resolves with the first event after index `from` that `pred` accepts, or, once the socket
 * closed, with whatever matched by then (undefined for none).
 *
 * @example
 * await until(client, (e) => e.type === 'response.done')
 */
export function until<E>(s: { events: E[]; closed: Promise<number> }, pred: (e: E) => boolean, from = 0): Promise<E | undefined> {
  return new Promise((resolve) => {
    const check = () => {
      const e = s.events.slice(from).find(pred);
      if (e) return resolve(e);
      t = setTimeout(check, 2);
    };
    let t = setTimeout(check, 0);
    void s.closed.then(() => {
      clearTimeout(t);
      resolve(s.events.slice(from).find(pred));
    });
  });
}
