/** Something that runs in the background of the server process (webhooks, knowledge base, retention). */
export type BackgroundWorker = { name: string; start(): Promise<void>; stop(): Promise<void> };

export class Workers {
  constructor(private readonly list: BackgroundWorker[]) {}

  async start(): Promise<void> {
    for (const worker of this.list) await worker.start();
  }

  async stop(): Promise<void> {
    for (const worker of [...this.list].reverse()) await worker.stop();
  }
}
