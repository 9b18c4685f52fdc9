import { Firestore, type Settings } from '@google-cloud/firestore'
import { ValidationError } from './errors'

export interface ConnectionSettings {
  /** Google Cloud project; defaults to GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT / the credentials. */
  projectId?: string
  /** Firestore database id, `(default)` unless named. */
  database?: string
  /** Lease documents' collection. */
  collection?: string
  /** Gate documents' collection. */
  gateCollection?: string
  /** Path of a service-account key file (otherwise Application Default Credentials). */
  keyFilename?: string
}

export const DEFAULT_COLLECTION = 'leases'
export const DEFAULT_GATE_COLLECTION = 'publish_gate'
export const DEFAULT_DATABASE = '(default)'
/** Used against the emulator when no project is named: any id works there. */
export const EMULATOR_PROJECT = 'demo-leasefence'

const COLLECTION_RE = /^[A-Za-z0-9_-]{1,100}$/

export function resolveConnection(s: ConnectionSettings, env: NodeJS.ProcessEnv = process.env): Required<Omit<ConnectionSettings, 'projectId' | 'keyFilename'>> & ConnectionSettings {
  const collection = s.collection || DEFAULT_COLLECTION
  const gateCollection = s.gateCollection || DEFAULT_GATE_COLLECTION
  for (const [name, value] of [['collection', collection], ['gate-collection', gateCollection]] as const) {
    if (!COLLECTION_RE.test(value) || /^__.*__$/.test(value)) {
      throw new ValidationError(`${name}: "${value}" is not a usable collection id; use letters, digits, - and _`)
    }
  }
  if (collection === gateCollection) {
    throw new ValidationError('gate-collection: must differ from collection')
  }
  const projectId = s.projectId || env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT || env.GCP_PROJECT ||
    (env.FIRESTORE_EMULATOR_HOST ? EMULATOR_PROJECT : undefined)
  return {
    projectId,
    database: s.database || DEFAULT_DATABASE,
    collection,
    gateCollection,
    keyFilename: s.keyFilename || undefined
  }
}

/** Opens a Firestore client (gRPC). FIRESTORE_EMULATOR_HOST is honoured by the client itself. */
export function openFirestore(s: ConnectionSettings, env: NodeJS.ProcessEnv = process.env): Firestore {
  const c = resolveConnection(s, env)
  if (env.FIRESTORE_EMULATOR_HOST && !env.METADATA_SERVER_DETECTION) {
    // Against the emulator there is no metadata server to ask; skipping the probe saves ~50ms and a warning.
    process.env.METADATA_SERVER_DETECTION = 'none'
  }
  const settings: Settings = { databaseId: c.database, ignoreUndefinedProperties: true }
  if (c.projectId) settings.projectId = c.projectId
  if (c.keyFilename) settings.keyFilename = c.keyFilename
  return new Firestore(settings)
}
