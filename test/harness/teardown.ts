import { createArtifactsDir, releaseArtifactsDir, type StopOptions } from "./artifacts.js";

/** Anything a stack must stop: a process, a loop, a server. */
export interface Stoppable {
  stop(): Promise<void>;
}

/** What a stack's parts are stopped with, in reverse order of registration. */
export class Teardown {
  private readonly parts: Stoppable[] = [];

  constructor(
    /** The stack's artifact directory (logs and data). */
    readonly dir: string,
  ) {}

  /** Registers `part` to be stopped before everything registered earlier; returns it. */
  add<T extends Stoppable>(part: T): T {
    this.parts.push(part);
    return part;
  }

  /** Stops every part (later ones first), then removes the artifact directory unless `keepLogs`. */
  async stop(options: StopOptions = {}): Promise<void> {
    for (const part of this.parts.splice(0).reverse()) await part.stop();
    releaseArtifactsDir(this.dir, options.keepLogs ?? false);
  }
}

/**
 * Creates an artifact directory labelled `label` and runs `start` with a {@link Teardown} for
 * it. When `start` throws, everything it registered is stopped and the logs are kept.
 */
export async function startStack<T>(label: string, start: (teardown: Teardown) => Promise<T>): Promise<T> {
  const teardown = new Teardown(createArtifactsDir(label));
  try {
    return await start(teardown);
  } catch (error) {
    await teardown.stop({ keepLogs: true });
    throw error;
  }
}
