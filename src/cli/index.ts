import { Command, CommanderError } from 'commander'
import { LeasefenceError } from '../core/errors'
import { envCommand } from './env'
import { publishCommand } from './publish'
import { runCommand } from './run'
import { statusCommand } from './status'
import { reapCommand, releaseCommand } from './release'

export const VERSION = '0.1.0'

export function buildProgram(): Command {
  const program = new Command('leasefence')
    .description('fenced Firestore leases: one holder at a time for a shared resource, and a gate that refuses stale holders')
    .version(VERSION)
    .showHelpAfterError()
    .enablePositionalOptions()
  // run and publish end with a command line of its own: options after it belong to it.
  for (const sub of [runCommand(), publishCommand()]) program.addCommand(sub.passThroughOptions().showHelpAfterError())
  for (const sub of [statusCommand(), releaseCommand(), reapCommand(), envCommand()]) program.addCommand(sub.showHelpAfterError())
  program.exitOverride()
  for (const sub of program.commands) sub.exitOverride()
  return program
}

/** Runs the CLI; resolves with the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv, { from: 'user' })
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : 2
    }
    if (err instanceof LeasefenceError) {
      process.stderr.write(`leasefence: ${err.message}\n`)
      return 1
    }
    process.stderr.write(`leasefence: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    return 1
  }
}
