/** What the stack uses of an AWS SDK client. */
interface SdkClient {
  send(command: unknown, options?: unknown): Promise<unknown>;
  destroy(): void;
}

/**
 * A client whose SDK module is loaded, and the client built (`build`), on its first request: its
 * `send` waits for both; `destroy()` ends the client if it was built, and one built after it
 * ends at once. Typed as the client `build` makes, of which only `send` and `destroy` may be used.
 *
 * Why: each SDK client module costs some 10 ms of start-up to load, and most runs never send the
 * requests they are there for (SQS: approvals and triggers; Step Functions: the owner registers
 * and runs its workflows in process).
 */
export function lazySdkClient<C>(build: () => Promise<C>): C {
  let client: Promise<SdkClient> | undefined;
  let destroyed = false;
  const built = () =>
    (client ??= build().then((c) => {
      const sdkClient = c as unknown as SdkClient;
      if (destroyed) sdkClient.destroy();
      return sdkClient;
    }));
  const lazy: SdkClient = {
    send: (command, options) => built().then((c) => c.send(command, options)),
    destroy() {
      destroyed = true;
      void client?.then((c) => c.destroy());
    },
  };
  return lazy as unknown as C;
}
