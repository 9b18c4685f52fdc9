import { getOctokit } from '@actions/github'

/**
 * Liveness-aware takeover: a lease whose holder's GitHub run attempt has completed (or been cancelled)
 * is stale even before it expires. Only a definite answer from the API counts: any error, rate limit or
 * missing metadata means "unknown", and unknown never justifies a takeover.
 */
export type RunLiveness =
  | { state: 'over'; status: string; conclusion: string | null; url?: string }
  | { state: 'running'; status: string }
  | { state: 'unknown'; reason: string }

export interface LivenessOptions {
  token: string
  /** GitHub API base URL (GITHUB_API_URL; a local fake in tests). */
  apiUrl?: string
}

/** Holder metadata fields the action stores in the lease (see action/main.ts). */
export interface RunIdentity {
  repository?: string
  runId?: string
  runAttempt?: string
}

export async function holderRunLiveness(meta: RunIdentity, opts: LivenessOptions): Promise<RunLiveness> {
  const [owner, repo] = (meta.repository ?? '').split('/')
  const runId = Number(meta.runId)
  const attempt = Number(meta.runAttempt || '1')
  if (!owner || !repo || !Number.isSafeInteger(runId) || runId <= 0 || !Number.isSafeInteger(attempt)) {
    return { state: 'unknown', reason: 'the holder did not record a GitHub run' }
  }
  if (!opts.token) return { state: 'unknown', reason: 'no github-token to ask the API with' }
  try {
    const octokit = getOctokit(opts.token, {
      baseUrl: opts.apiUrl ?? process.env.GITHUB_API_URL ?? undefined,
      request: { retries: 0 },
      retry: { enabled: false }
    })
    const { data } = await octokit.rest.actions.getWorkflowRunAttempt({
      owner,
      repo,
      run_id: runId,
      attempt_number: attempt
    })
    const status = String(data.status ?? '')
    if (status === 'completed') {
      return { state: 'over', status, conclusion: data.conclusion ?? null, url: data.html_url }
    }
    if (!status) return { state: 'unknown', reason: 'the API returned no status' }
    return { state: 'running', status }
  } catch (err) {
    const e = err as { status?: number; message?: string }
    return { state: 'unknown', reason: `GitHub API error${e.status ? ` ${e.status}` : ''}: ${e.message ?? String(err)}` }
  }
}
