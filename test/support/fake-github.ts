import { createServer, type Server } from 'node:http'

/** A local stand-in for the GitHub REST API's workflow-run-attempt endpoint (Firestore is never faked). */
export interface FakeGitHub {
  url: string
  requests: string[]
  /** status per `runId/attempt`: 'completed', 'in_progress', or an HTTP error code. */
  runs: Map<string, { status: string; conclusion?: string | null } | number>
  close(): Promise<void>
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const runs: FakeGitHub['runs'] = new Map()
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} auth=${req.headers.authorization ?? ''}`)
    const m = /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/attempts\/(\d+)/.exec(req.url ?? '')
    const entry = m ? runs.get(`${m[3]}/${m[4]}`) : undefined
    if (typeof entry === 'number') {
      res.writeHead(entry, { 'content-type': 'application/json', 'x-ratelimit-remaining': '0' })
      res.end(JSON.stringify({ message: entry === 403 ? 'API rate limit exceeded' : 'error' }))
      return
    }
    if (!m || !entry) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ message: 'Not Found' }))
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        id: Number(m[3]),
        run_attempt: Number(m[4]),
        status: entry.status,
        conclusion: entry.conclusion ?? null,
        html_url: `https://github.example/${m[1]}/${m[2]}/actions/runs/${m[3]}/attempts/${m[4]}`
      })
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    runs,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}
