import { Option, type Command } from 'commander'
import type { ConnectionSettings } from '../core/connection'

/** Connection flags shared by every command; each falls back to an environment variable. */
export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--project <id>', 'Google Cloud project (default: GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT / credentials)').env('LEASEFENCE_PROJECT'))
    .addOption(new Option('--database <id>', 'Firestore database id').env('LEASEFENCE_DATABASE').default('(default)'))
    .addOption(new Option('--collection <name>', 'collection of lease documents').env('LEASEFENCE_COLLECTION').default('leases'))
    .addOption(new Option('--gate-collection <name>', 'collection of gate documents').env('LEASEFENCE_GATE_COLLECTION').default('publish_gate'))
    .addOption(new Option('--credentials <file>', 'service-account key file (default: Application Default Credentials)').env('LEASEFENCE_CREDENTIALS_FILE'))
}

export interface ConnectionFlags {
  project?: string
  database?: string
  collection?: string
  gateCollection?: string
  credentials?: string
}

export function connectionFrom(flags: ConnectionFlags): ConnectionSettings {
  return {
    projectId: flags.project,
    database: flags.database,
    collection: flags.collection,
    gateCollection: flags.gateCollection,
    keyFilename: flags.credentials
  }
}

/** The variables a child command needs to reach the same lease store (for a nested `leasefence publish`). */
export function connectionEnv(c: ConnectionSettings): Record<string, string> {
  const env: Record<string, string> = {}
  if (c.projectId) env.LEASEFENCE_PROJECT = c.projectId
  if (c.database) env.LEASEFENCE_DATABASE = c.database
  if (c.collection) env.LEASEFENCE_COLLECTION = c.collection
  if (c.gateCollection) env.LEASEFENCE_GATE_COLLECTION = c.gateCollection
  if (c.keyFilename) env.LEASEFENCE_CREDENTIALS_FILE = c.keyFilename
  return env
}
