import { ValidationError } from './errors'

/**
 * The two switches operators reach for:
 * - dry run (LEASEFENCE_DRY_RUN=1 / input dry-run): read, log what would happen, write nothing, and
 *   always proceed as if acquired (the gate too);
 * - disabled (LEASEFENCE_DISABLED=1): no lease at all, for an emergency rollback; said loudly.
 */
export type RunMode = 'normal' | 'dry-run' | 'disabled'

const TRUE = ['1', 'true', 'yes', 'on']
const FALSE = ['', '0', 'false', 'no', 'off']

export function parseBool(value: string | undefined, name: string): boolean {
  const v = (value ?? '').trim().toLowerCase()
  if (TRUE.includes(v)) return true
  if (FALSE.includes(v)) return false
  throw new ValidationError(`${name}: "${value}" is not true or false`)
}

export function runMode(env: NodeJS.ProcessEnv = process.env, dryRunInput?: string): RunMode {
  if (parseBool(env.LEASEFENCE_DISABLED, 'LEASEFENCE_DISABLED')) return 'disabled'
  if (parseBool(env.LEASEFENCE_DRY_RUN, 'LEASEFENCE_DRY_RUN') || parseBool(dryRunInput, 'dry-run')) return 'dry-run'
  return 'normal'
}

export const DISABLED_BANNER =
  'LEASEFENCE_DISABLED is set: NO LEASE IS TAKEN and nothing is fenced. Concurrent runs can clobber each other.'
