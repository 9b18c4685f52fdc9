import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * Starts the real Firestore emulator on a free loopback port (used by the tests, the demo and the
 * benchmark). Prefers the jar (faster start), falls back to `gcloud emulators firestore start`.
 */
export const EMULATOR_JAR_CANDIDATES = [
  process.env.LEASEFENCE_EMULATOR_JAR,
  '/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar',
  '/usr/share/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar',
  '/opt/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar'
].filter((p): p is string => !!p)

export const INSTALL_HINT = [
  'No Firestore emulator was found. Install one of:',
  '  - gcloud components install cloud-firestore-emulator   (or Debian/apt: google-cloud-cli-firestore-emulator)',
  '  - npm i -g firebase-tools && firebase emulators:start --only firestore   (then set FIRESTORE_EMULATOR_HOST)',
  'or point the tests at a running emulator with FIRESTORE_EMULATOR_HOST=127.0.0.1:PORT.',
  'A custom jar location can be given with LEASEFENCE_EMULATOR_JAR=/path/to/cloud-firestore-emulator.jar.'
].join('\n')

export interface RunningEmulator {
  host: string
  port: number
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))))
    })
  })
}

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = `${dir}/${cmd}`
    if (dir && existsSync(p)) return p
  }
  return undefined
}

export function findEmulatorCommand(port: number): { cmd: string; args: string[] } | undefined {
  const jar = EMULATOR_JAR_CANDIDATES.find((p) => existsSync(p))
  const java = which('java')
  if (jar && java) {
    // The jar has no Main-Class: launch the class the SDK's own wrapper script launches.
    return {
      cmd: java,
      args: ['-Duser.language=en', '-cp', jar, 'com.google.cloud.datastore.emulator.firestore.CloudFirestore', '--host=127.0.0.1', `--port=${port}`]
    }
  }
  const gcloud = which('gcloud')
  if (gcloud) return { cmd: gcloud, args: ['emulators', 'firestore', 'start', `--host-port=127.0.0.1:${port}`] }
  return undefined
}

export async function startEmulator(opts: { timeoutMs?: number; log?: (line: string) => void } = {}): Promise<RunningEmulator> {
  const port = await freePort()
  const found = findEmulatorCommand(port)
  if (!found) throw new Error(INSTALL_HINT)
  const child: ChildProcess = spawn(found.cmd, found.args, {
    env: { ...process.env, JAVA_TOOL_OPTIONS: process.env.JAVA_TOOL_OPTIONS ?? '-Xmx256m' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const host = `127.0.0.1:${port}`
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Firestore emulator did not start within ${opts.timeoutMs ?? 60000}ms:\n${output}`)),
      opts.timeoutMs ?? 60_000
    )
    const onData = (buf: Buffer) => {
      const text = buf.toString()
      output += text
      for (const line of text.split('\n')) if (line.trim()) opts.log?.(line)
      if (output.includes('Dev App Server is now running')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`Firestore emulator exited with ${code} before it was ready:\n${output}\n\n${INSTALL_HINT}`))
    })
  })
  child.removeAllListeners('exit')
  child.stdout!.removeAllListeners('data').resume()
  child.stderr!.removeAllListeners('data').resume()
  await warmUp(host)
  return {
    host,
    port,
    async stop() {
      if (child.exitCode !== null) return
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        /* already gone */
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          /* already gone */
        }
      }, 5000)
      await exited
      clearTimeout(timer)
    }
  }
}

/** The first request after start is slow (~1s); pay it once here. */
async function warmUp(host: string): Promise<void> {
  const url = `http://${host}/v1/projects/warmup/databases/(default)/documents/warmup/doc`
  for (let i = 0; i < 20; i++) {
    try {
      await fetch(url, { method: 'PATCH', body: JSON.stringify({ fields: { x: { integerValue: '1' } } }) })
      return
    } catch {
      await new Promise((r) => setTimeout(r, 250))
    }
  }
}

/** Deletes every document of one project (the emulator's reset endpoint). */
export async function resetProject(host: string, projectId: string, database = '(default)'): Promise<void> {
  const res = await fetch(`http://${host}/emulator/v1/projects/${projectId}/databases/${database}/documents`, {
    method: 'DELETE'
  })
  if (!res.ok) throw new Error(`emulator reset failed: ${res.status} ${await res.text()}`)
}
