import { Command } from 'commander'
import { LeaseStore } from '../core/lease-store'
import { STATE_DIR_ENV } from '../core/local-state'
import { validateOwner, validateResource, validateToken } from '../core/options'
import { checkGate, EXIT_FENCED } from '../core/publish'
import { ValidationError } from '../core/errors'
import { planGate } from '../core/dry-run'
import { DISABLED_BANNER, runMode } from '../core/modes'
import { runChild, onTerminationSignals } from './child'
import { addConnectionOptions, connectionFrom, type ConnectionFlags } from './settings'

interface PublishFlags extends ConnectionFlags {
  resource?: string
  owner?: string
  token?: string
}

export function publishCommand(): Command {
  const cmd = new Command('publish')
    .description('pass the fencing gate with the current lease, then run CMD (the side effect)')
    .option('--resource <name>', 'default: LEASEFENCE_RESOURCE')
    .option('--owner <id>', 'default: LEASEFENCE_OWNER')
    .option('--token <n>', 'default: LEASEFENCE_FENCING_TOKEN')
    .argument('<cmd...>', 'the side effect to run (after --), e.g. git push origin HEAD:main')
    .addHelpText(
      'after',
      `
Exit codes: CMD's own when the gate passed; 75 when the gate refused (a newer token passed, or the lease
was lost or taken over): CMD did not run; 1 when Firestore could not be asked.

Example (in a step after the leasefence action, or inside leasefence run):
  leasefence publish -- git push origin HEAD:main`
    )
  addConnectionOptions(cmd)
  cmd.action(async (argv: string[], flags: PublishFlags) => {
    process.exitCode = await publish(argv, flags)
  })
  return cmd
}

async function publish(argv: string[], flags: PublishFlags): Promise<number> {
  const mode = runMode(process.env)
  if (mode === 'disabled') {
    process.stderr.write(`leasefence: ${DISABLED_BANNER} Publishing without the gate.\n`)
    return runChild(argv[0], argv.slice(1), process.env).exited
  }
  const resource = flags.resource ?? process.env.LEASEFENCE_RESOURCE ?? ''
  const owner = flags.owner ?? process.env.LEASEFENCE_OWNER ?? ''
  const tokenText = flags.token ?? process.env.LEASEFENCE_FENCING_TOKEN
  if (!resource || !owner || !tokenText) {
    throw new ValidationError(
      'publish needs a lease: run it in a step after the leasefence action or inside `leasefence run`, ' +
        'or pass --resource, --owner and --token (LEASEFENCE_RESOURCE, LEASEFENCE_OWNER, LEASEFENCE_FENCING_TOKEN)'
    )
  }
  validateResource(resource)
  validateOwner(owner)
  const token = validateToken(tokenText)
  const store = new LeaseStore(connectionFrom(flags))
  try {
    if (mode === 'dry-run') {
      const plan = await planGate(store, resource, token)
      process.stderr.write(`leasefence: ${plan.message}\n`)
      return await runChild(argv[0], argv.slice(1), process.env).exited
    }
    const outcome = await checkGate(store, { resource, owner, token, stateDir: process.env[STATE_DIR_ENV] })
    if (!outcome.passed) {
      process.stderr.write(`leasefence: publish refused, not running ${argv[0]}: ${outcome.error.message}\n`)
      return EXIT_FENCED
    }
  } finally {
    await store.close()
  }
  const child = runChild(argv[0], argv.slice(1), process.env)
  const uninstall = onTerminationSignals((sig) => child.child.kill(sig))
  try {
    return await child.exited
  } finally {
    uninstall()
  }
}
