import { runCli } from './cli/index'
import { runHeartbeatDaemon } from './action/heartbeat-daemon'
import { runMain } from './action/main'
import { runPost } from './action/post'
import { runPublish } from './action/publish'

export type EntryMode = 'cli' | 'main' | 'post' | 'publish' | 'heartbeat'

/** One bundle, several entry points: the small files in dist/ call this with their mode. */
export async function entry(mode: EntryMode): Promise<void> {
  switch (mode) {
    case 'cli': {
      const code = await runCli(process.argv.slice(2))
      process.exitCode = code
      // Normally the process ends here by itself; a gRPC call left hanging by a broken network must not
      // keep it alive (the timer is unref'd: it only fires if something else holds the loop open).
      setTimeout(() => process.exit(code), 3000).unref()
      return
    }
    case 'main':
      return runMain()
    case 'post':
      return runPost()
    case 'publish':
      return runPublish()
    case 'heartbeat':
      return runHeartbeatDaemon(process.argv[2])
    default:
      throw new Error(`leasefence: unknown entry point ${mode}`)
  }
}
