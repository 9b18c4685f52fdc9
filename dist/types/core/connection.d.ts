import { Firestore } from '@google-cloud/firestore';
export interface ConnectionSettings {
    /** Google Cloud project; defaults to GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT / the credentials. */
    projectId?: string;
    /** Firestore database id, `(default)` unless named. */
    database?: string;
    /** Lease documents' collection. */
    collection?: string;
    /** Gate documents' collection. */
    gateCollection?: string;
    /** Path of a service-account key file (otherwise Application Default Credentials). */
    keyFilename?: string;
}
export declare const DEFAULT_COLLECTION = "leases";
export declare const DEFAULT_GATE_COLLECTION = "publish_gate";
export declare const DEFAULT_DATABASE = "(default)";
/** Used against the emulator when no project is named: any id works there. */
export declare const EMULATOR_PROJECT = "demo-leasefence";
export declare function resolveConnection(s: ConnectionSettings, env?: NodeJS.ProcessEnv): Required<Omit<ConnectionSettings, 'projectId' | 'keyFilename'>> & ConnectionSettings;
/** Opens a Firestore client (gRPC). FIRESTORE_EMULATOR_HOST is honoured by the client itself. */
export declare function openFirestore(s: ConnectionSettings, env?: NodeJS.ProcessEnv): Firestore;
