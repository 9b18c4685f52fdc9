import { inject } from 'vitest'

// Every test process talks to the emulator started by global-setup.ts.
process.env.FIRESTORE_EMULATOR_HOST = inject('emulatorHost')
process.env.METADATA_SERVER_DETECTION = 'none'
delete process.env.GOOGLE_APPLICATION_CREDENTIALS
