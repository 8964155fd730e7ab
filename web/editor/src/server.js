// Every call of the page to the editor's server (docs/editor-server.md), one small function
// each. The session token travels as the cookie the server set when the page was opened
// (main.js), so no call adds it. Each call resolves to the server's answer as
// { ok, status, body, text, etag }: body is the parsed JSON (null when the answer is not
// JSON), etag the ETag header (null when absent). A failed request (the server down) rejects.
// client(fetchFn) makes the same functions over another fetch (a test's); the module's own
// use the page's fetch.

const q = encodeURIComponent;

/** The functions below over fetchFn. */
export function client(fetchFn = (...args) => globalThis.fetch(...args)) {
  async function call(url, options) {
    const r = await fetchFn(url, options);
    const text = await r.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    return { ok: r.ok, status: r.status, body, text, etag: r.headers.get('ETag') };
  }
  return {
    /** Any call: the answer to url (an /api address) with fetch's options. */
    call,
    /** The project: its figure, sequence and files ({ files: [{ path, kind }] ...}). */
    project: () => call('/api/project'),
    /** A file of the project; etag: its version. */
    file: (path) => call(`/api/file?path=${q(path)}`),
    /**
     * Writes a file of the project: over the version `etag` (If-Match), or as a new file when
     * etag is '' (If-None-Match: *); 409 or 412 when the file is not at that version.
     */
    putFile(path, body, etag) {
      const headers = { 'Content-Type': 'application/json' };
      if (etag) headers['If-Match'] = `"${etag}"`;
      else headers['If-None-Match'] = '*';
      return call(`/api/file?path=${q(path)}`, { method: 'PUT', headers, body });
    },
    /** Removes a file of the project (at version etag when given). */
    deleteFile(path, etag = '') {
      const headers = etag ? { 'If-Match': `"${etag}"` } : {};
      return call(`/api/file?path=${q(path)}`, { method: 'DELETE', headers });
    },
    /** The figure document of a figure file of the project, or of a built-in figure; with
     * root, of the figure re-rooted at that joint (a sequence document's `root`). */
    figure: (path, root) => call(`/api/figure?path=${q(path)}${root ? `&root=${q(root)}` : ''}`),
    /** Stores a file (an ArrayBuffer) in the project: { path, version, figure? }. */
    upload: (name, data) =>
      call(`/api/upload?name=${q(name)}`, {
        method: 'POST',
        body: data,
        headers: { 'Content-Type': 'application/octet-stream' },
      }),
    /** Bakes the stored sequence into a file of the format 'bvh' or 'glb': { path }. */
    exportSequence: (sequence, format) => call(`/api/export?sequence=${q(sequence)}&format=${format}`, { method: 'POST' }),
  };
}

/** The address that downloads a file of the project. */
export function downloadUrl(path) {
  return `/api/file?path=${q(path)}&download=1`;
}

/** The answer's body, or an error `what: message` (the server's error, else its status). */
export function expect(r, what) {
  if (!r.ok) throw new Error(`${what}: ${r.body?.error ?? `HTTP ${r.status}`}`);
  return r.body;
}

/** An ETag as the version it carries (W/ and quotes removed); '' for none. */
/**
 * A file a document names, as the project path the server serves: beside the document
 * (docs/sequence.md, "The figure's path"), the built-in "stickman" as it is. A `..` segment
 * is kept: the server refuses it, as its reader refuses a figure outside the document's
 * folder when the document is saved.
 */
export function beside(docPath, file) {
  if (file === 'stickman' || file.startsWith('/')) return file;
  const dir = docPath.includes('/') ? docPath.slice(0, docPath.lastIndexOf('/') + 1) : '';
  return (dir + file)
    .split('/')
    .filter((seg) => seg !== '' && seg !== '.')
    .join('/');
}

export function unquote(etag) {
  return etag ? etag.replace(/^W\//, '').replace(/^"|"$/g, '') : '';
}

export const { project, file, putFile, deleteFile, figure, upload, exportSequence } = client();
