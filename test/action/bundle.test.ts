import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { parse } from 'yaml'
import { REPO_ROOT } from '../support/runner'

/** The committed dist/ is what workflows run: it must be exactly a fresh bundle of the sources. */
const out = mkdtempSync(join(tmpdir(), 'leasefence-bundle-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
}

test('dist/ equals a fresh build of the sources, byte for byte', () => {
  execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/build.mjs'), '--out', join(out, 'dist')], { cwd: REPO_ROOT, stdio: 'pipe' })
  const fresh = join(out, 'dist')
  const committed = join(REPO_ROOT, 'dist')
  expect(files(committed), 'dist/ has other files than a fresh build: run npm run build').toEqual(files(fresh))
  const differing = files(fresh).filter((f) => !readFileSync(join(fresh, f)).equals(readFileSync(join(committed, f))))
  expect(differing, 'dist/ is stale: run npm run build and commit dist/').toEqual([])
  for (const f of files(fresh)) expect(statSync(join(committed, f)).mode & 0o111, `${f}: executable bit`).toBe(statSync(join(fresh, f)).mode & 0o111)
}, 300_000)

test('the entry points named by action.yml and publish/action.yml exist in dist/', () => {
  const root = parse(readFileSync(join(REPO_ROOT, 'action.yml'), 'utf8')) as { runs: Record<string, string> }
  expect(root.runs).toEqual({ using: 'node24', main: 'dist/main.js', post: 'dist/post.js', 'post-if': 'always()' })
  const pub = parse(readFileSync(join(REPO_ROOT, 'publish/action.yml'), 'utf8')) as { runs: Record<string, string>; inputs: object; outputs: object }
  expect(pub.runs).toEqual({ using: 'node24', main: '../dist/publish.js' })
  expect(Object.keys(pub.inputs)).toEqual(['run'])
  expect(Object.keys(pub.outputs)).toEqual(['published'])
  for (const f of ['main.js', 'post.js', 'publish.js', 'heartbeat.js', 'cli.js']) {
    expect(readFileSync(join(REPO_ROOT, 'dist', f), 'utf8')).toContain(`require('./index.js').entry('${f.replace('.js', '')}')`)
  }
})
