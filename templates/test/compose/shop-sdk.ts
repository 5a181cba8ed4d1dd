// A stand-in for a connector's TypeScript SDK (the composite calls its methods): it records every
// call and answers from a small in-memory shop. Item 3 cannot be closed.

/** The options a connector client takes. */
export interface ClientOptions {
  gatewayUrl?: string;
  gatewayConnector?: string;
  baseUrl?: string;
}

/** One recorded call. */
export interface Sent {
  method: string;
  input: Record<string, unknown>;
  options: Record<string, unknown>;
  connector: string | undefined;
}

export const SENT: Sent[] = [];

/** The shop's items: number → open. */
export const ITEMS = new Map<number, boolean>([
  [1, true],
  [2, true],
]);

export class ShopClient {
  readonly #connector: string | undefined;

  constructor(options: ClientOptions = {}) {
    this.#connector = options.gatewayConnector;
  }

  #record(method: string, input: object, options: object): void {
    SENT.push({ method, input: { ...input } as Record<string, unknown>, options: { ...options } as Record<string, unknown>, connector: this.#connector });
  }

  async listItem(input: { owner: string }, options: Record<string, unknown> = {}): Promise<{ number: number; open: boolean }[]> {
    this.#record("listItem", input, options);
    return [...ITEMS].map(([number, open]) => ({ number, open }));
  }

  async closeItem(input: { owner: string; number: number }, options: Record<string, unknown> = {}): Promise<{ number: number; open: boolean }> {
    this.#record("closeItem", input, options);
    if (options.dryRun === true) return { number: input.number, open: true };
    if (!ITEMS.has(input.number)) throw Object.assign(new Error("No such item."), { code: "not_found" });
    ITEMS.set(input.number, false);
    return { number: input.number, open: false };
  }

  async reopenItem(input: { owner: string; number: number }, options: Record<string, unknown> = {}): Promise<{ number: number; open: boolean }> {
    this.#record("reopenItem", input, options);
    ITEMS.set(input.number, true);
    return { number: input.number, open: true };
  }
}
