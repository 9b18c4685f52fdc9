import { ValidationError } from '../core/errors'

/**
 * Port bands of environment slots. Each named base (dev=3000, api=4000, ...) gives slot i the port
 * `base + i × portsPerSlot`; the slot also owns the ports after it up to the next slot's (its band), for
 * whatever else its processes open. Pure functions of the slot index: the same slot always gets the same
 * ports, on every machine and after every restart.
 */
export interface PortBase {
  /** `dev`, `api`, `db-proxy`, ...: [a-z][a-z0-9-]* */
  name: string
  base: number
}

export const DEFAULT_PORT_BASES: readonly PortBase[] = Object.freeze([
  { name: 'dev', base: 3000 },
  { name: 'api', base: 4000 },
  { name: 'db-proxy', base: 5000 }
])
export const DEFAULT_PORTS_PER_SLOT = 10
/** The port `env ready` waits on: the one named `dev`, or else the first. */
export const DEV_PORT_NAME = 'dev'

const NAME_RE = /^[a-z][a-z0-9-]{0,30}$/

/** Parses `dev=3000,api=4000,db-proxy=5000` (order kept). */
export function parsePortBases(text: string): PortBase[] {
  const items = text.split(',').map((s) => s.trim()).filter(Boolean)
  if (items.length === 0) throw new ValidationError('port-base: give at least one NAME=PORT, e.g. dev=3000,api=4000')
  const out: PortBase[] = []
  for (const item of items) {
    const m = /^([^=\s]+)\s*=\s*(\d+)$/.exec(item)
    if (!m) throw new ValidationError(`port-base: "${item}" is not NAME=PORT (e.g. dev=3000)`)
    out.push({ name: m[1], base: Number(m[2]) })
  }
  return out
}

export function formatPortBases(bases: readonly PortBase[]): string {
  return bases.map((b) => `${b.name}=${b.base}`).join(',')
}

/** The environment variable a named port goes into: dev → PORT, api → API_PORT, db-proxy → DB_PROXY_PORT. */
export function portEnvName(name: string): string {
  return name === DEV_PORT_NAME ? 'PORT' : `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PORT`
}

export function parsePortsPerSlot(value: string | number): number {
  const n = typeof value === 'string' ? Number(value.trim()) : value
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw new ValidationError(`ports-per-slot: "${value}" must be a whole number from 1 to 10000`)
  }
  return n
}

/**
 * Checks names, that every slot's ports exist (≤ 65535), and that no two named bands overlap for any of
 * the `slots` slots (dev=3000 and api=3050 with 10 slots of 10 ports would hand one port to two names).
 */
export function validatePortLayout(bases: readonly PortBase[], portsPerSlot: number, slots: number): void {
  parsePortsPerSlot(portsPerSlot)
  if (bases.length === 0) throw new ValidationError('port-base: give at least one NAME=PORT')
  const seen = new Set<string>()
  const envNames = new Set<string>()
  for (const b of bases) {
    if (!NAME_RE.test(b.name)) {
      throw new ValidationError(`port-base: "${b.name}" is not a port name; use lower-case letters, digits and - (starting with a letter)`)
    }
    if (seen.has(b.name)) throw new ValidationError(`port-base: "${b.name}" is named twice`)
    seen.add(b.name)
    const env = portEnvName(b.name)
    if (envNames.has(env)) throw new ValidationError(`port-base: two names map to the same variable ${env}`)
    envNames.add(env)
    if (!Number.isInteger(b.base) || b.base < 1 || b.base > 65535) {
      throw new ValidationError(`port-base: ${b.name}=${b.base} is not a port number (1-65535)`)
    }
    const last = b.base + slots * portsPerSlot - 1
    if (last > 65535) {
      throw new ValidationError(
        `port-base: ${b.name}=${b.base} with ${slots} slots of ${portsPerSlot} ports needs ports up to ${last} (past 65535); lower the base or ports-per-slot`
      )
    }
  }
  const ranges = bases.map((b) => ({ name: b.name, from: b.base, to: b.base + slots * portsPerSlot - 1 }))
  for (let i = 0; i < ranges.length; i++) {
    for (let j = i + 1; j < ranges.length; j++) {
      const a = ranges[i]
      const b = ranges[j]
      if (a.from <= b.to && b.from <= a.to) {
        throw new ValidationError(
          `port-base: ${a.name} (${a.from}-${a.to}) and ${b.name} (${b.from}-${b.to}) overlap for ${slots} slots of ${portsPerSlot} ports; move one base`
        )
      }
    }
  }
}

export interface SlotPorts {
  /** name → the slot's port of that name. */
  ports: Record<string, number>
  /** Every port the slot owns: for each name, [port, port + portsPerSlot - 1]. */
  bands: { name: string; from: number; to: number }[]
  /** The port `env ready` checks. */
  devPort: number
  devName: string
}

export function slotPorts(slot: number, bases: readonly PortBase[], portsPerSlot: number): SlotPorts {
  if (!Number.isInteger(slot) || slot < 0) throw new ValidationError(`slot: "${slot}" must be a whole number from 0`)
  const ports: Record<string, number> = {}
  const bands: SlotPorts['bands'] = []
  for (const b of bases) {
    const port = b.base + slot * portsPerSlot
    if (port + portsPerSlot - 1 > 65535) throw new ValidationError(`slot ${slot}: port ${b.name} would be past 65535`)
    ports[b.name] = port
    bands.push({ name: b.name, from: port, to: port + portsPerSlot - 1 })
  }
  const dev = bases.find((b) => b.name === DEV_PORT_NAME) ?? bases[0]
  return { ports, bands, devPort: ports[dev.name], devName: dev.name }
}

/** All ports of a slot's bands, ascending. */
export function bandPorts(p: SlotPorts): number[] {
  const out: number[] = []
  for (const band of p.bands) for (let port = band.from; port <= band.to; port++) out.push(port)
  return out.sort((a, b) => a - b)
}

export function formatBands(p: SlotPorts): string {
  return p.bands.map((b) => `${b.name}=${b.from}-${b.to}`).join(',')
}
