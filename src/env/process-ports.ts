import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

/**
 * Which processes listen on which TCP ports, from /proc (Linux): LISTEN sockets in /proc/net/tcp and
 * /proc/net/tcp6 give socket inodes by port, and /proc/<pid>/fd/* links (`socket:[inode]`) give the
 * processes that hold them. Processes are found by the sockets they own, never by name.
 */

export interface Listener {
  port: number
  pid: number
  /** /proc/<pid>/stat starttime: guards against the pid being reused between finding and signalling. */
  startTime: string
  command: string
}

export interface PortScan {
  listeners: Listener[]
  /** Ports with a LISTEN socket whose process we cannot see (another user's, another pid namespace). */
  unknown: number[]
  /** Why nothing could be scanned (not Linux), when so. */
  unsupported?: string
}

const LISTEN = '0A'

/** LISTEN sockets on the given ports: inode → port. Reads /proc/net/tcp and tcp6 (a missing one is skipped). */
export function listeningInodes(ports: Iterable<number>, procRoot = '/proc'): Map<string, number> {
  const wanted = new Set(ports)
  const out = new Map<string, number>()
  for (const file of ['net/tcp', 'net/tcp6']) {
    let text: string
    try {
      text = readFileSync(`${procRoot}/${file}`, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || f[3] !== LISTEN) continue
      const port = parseInt(f[1].slice(f[1].lastIndexOf(':') + 1), 16)
      const inode = f[9]
      if (wanted.has(port) && inode !== '0') out.set(inode, port)
    }
  }
  return out
}

export function procStartTime(pid: number, procRoot = '/proc'): string | undefined {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8')
    // Fields after the command (which may contain spaces and parentheses): state is field 3, starttime 22.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return rest[19]
  } catch {
    return undefined
  }
}

function procState(pid: number, procRoot = '/proc'): string | undefined {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

function procCommand(pid: number, procRoot = '/proc'): string {
  try {
    const argv = readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
    return argv.replace(/\s+/g, ' ').trim().slice(0, 120) || '?'
  } catch {
    return '?'
  }
}

/** The processes holding LISTEN sockets on `ports`. */
export function findListeners(ports: Iterable<number>, procRoot = '/proc'): PortScan {
  if (process.platform !== 'linux') return { listeners: [], unknown: [], unsupported: `no /proc on ${process.platform}` }
  const inodes = listeningInodes(ports, procRoot)
  if (inodes.size === 0) return { listeners: [], unknown: [] }
  const found = new Map<string, Listener>()
  const seenInodes = new Set<string>()
  let pids: string[]
  try {
    pids = readdirSync(procRoot).filter((d) => /^\d+$/.test(d))
  } catch (err) {
    return { listeners: [], unknown: [...new Set(inodes.values())], unsupported: `cannot read ${procRoot}: ${(err as Error).message}` }
  }
  for (const p of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`${procRoot}/${p}/fd`)
    } catch {
      continue // gone, or not ours to read
    }
    for (const fd of fds) {
      let link: string
      try {
        link = readlinkSync(`${procRoot}/${p}/fd/${fd}`)
      } catch {
        continue
      }
      const m = /^socket:\[(\d+)\]$/.exec(link)
      if (!m || !inodes.has(m[1])) continue
      const pid = Number(p)
      const port = inodes.get(m[1])!
      seenInodes.add(m[1])
      const key = `${pid}:${port}`
      if (found.has(key)) continue
      const startTime = procStartTime(pid, procRoot)
      if (startTime === undefined) continue
      found.set(key, { port, pid, startTime, command: procCommand(pid, procRoot) })
    }
  }
  const unknown = [...new Set([...inodes].filter(([inode]) => !seenInodes.has(inode)).map(([, port]) => port))]
  return { listeners: [...found.values()].sort((a, b) => a.port - b.port || a.pid - b.pid), unknown: unknown.sort((a, b) => a - b) }
}

/** Alive and still the same process (not a zombie, not a reused pid). */
function sameProcessAlive(pid: number, startTime: string): boolean {
  const st = procStartTime(pid)
  if (st !== startTime) return false
  const state = procState(pid)
  return state !== undefined && state !== 'Z' && state !== 'X'
}

export interface StoppedProcess {
  pid: number
  ports: number[]
  command: string
  /** How it ended: it exited on SIGTERM, needed SIGKILL, was gone already, or could not be signalled. */
  outcome: 'terminated' | 'killed' | 'gone' | 'failed'
  error?: string
}

export interface StopResult {
  stopped: StoppedProcess[]
  unknown: number[]
  unsupported?: string
}

/**
 * Stops every process listening on `ports`: SIGTERM, then SIGKILL after `graceMs` for those still alive.
 * Never signals this process itself. A process that exits by itself in between is "gone".
 */
export async function stopListeners(ports: Iterable<number>, opts: { graceMs?: number; pollMs?: number } = {}): Promise<StopResult> {
  const scan = findListeners(ports)
  const byPid = new Map<number, { startTime: string; ports: number[]; command: string }>()
  for (const l of scan.listeners) {
    if (l.pid === process.pid) continue
    const e = byPid.get(l.pid) ?? { startTime: l.startTime, ports: [], command: l.command }
    e.ports.push(l.port)
    byPid.set(l.pid, e)
  }
  const stopped: StoppedProcess[] = []
  const pending: { pid: number; startTime: string; rec: StoppedProcess }[] = []
  for (const [pid, e] of byPid) {
    const rec: StoppedProcess = { pid, ports: e.ports, command: e.command, outcome: 'terminated' }
    stopped.push(rec)
    if (!sameProcessAlive(pid, e.startTime)) {
      rec.outcome = 'gone'
      continue
    }
    try {
      process.kill(pid, 'SIGTERM')
      pending.push({ pid, startTime: e.startTime, rec })
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      rec.outcome = code === 'ESRCH' ? 'gone' : 'failed'
      if (code !== 'ESRCH') rec.error = (err as Error).message
    }
  }
  const grace = opts.graceMs ?? 5000
  const poll = opts.pollMs ?? 50
  const deadline = performance.now() + grace
  let alive = pending
  while (alive.length && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, poll))
    alive = alive.filter((p) => sameProcessAlive(p.pid, p.startTime))
  }
  for (const p of alive) {
    try {
      process.kill(p.pid, 'SIGKILL')
      p.rec.outcome = 'killed'
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') continue
      p.rec.outcome = 'failed'
      p.rec.error = (err as Error).message
    }
  }
  // Wait (briefly) for the killed ones to disappear so their ports are free when we return.
  const killDeadline = performance.now() + 2000
  let dying = alive.filter((p) => p.rec.outcome === 'killed')
  while (dying.length && performance.now() < killDeadline) {
    await new Promise((r) => setTimeout(r, poll))
    dying = dying.filter((p) => sameProcessAlive(p.pid, p.startTime))
  }
  return { stopped, unknown: scan.unknown, unsupported: scan.unsupported }
}
