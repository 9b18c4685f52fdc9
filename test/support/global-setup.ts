import type { TestProject } from 'vitest/node'
import { startEmulator } from './emulator'

/** Starts one Firestore emulator for the whole run unless FIRESTORE_EMULATOR_HOST points at one. */
export default async function setup(project: TestProject) {
  let host = process.env.FIRESTORE_EMULATOR_HOST
  let stop: (() => Promise<void>) | undefined
  if (!host) {
    const emu = await startEmulator()
    host = emu.host
    stop = emu.stop
    process.env.FIRESTORE_EMULATOR_HOST = host
  }
  project.provide('emulatorHost', host)
  return async () => {
    await stop?.()
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorHost: string
  }
}
