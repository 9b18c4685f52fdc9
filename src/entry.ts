import { runCli } from './cli/index'

export type EntryMode = 'cli' | 'main' | 'post' | 'publish' | 'heartbeat'

/** One bundle, several entry points: the small files in dist/ call this with their mode. */
export async function entry(mode: EntryMode): Promise<void> {
  switch (mode) {
    case 'cli':
      process.exitCode = await runCli(process.argv.slice(2))
      return
    default:
      throw new Error(`leasefence: unknown entry point ${mode}`)
  }
}
