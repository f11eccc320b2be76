// The `download` jobs this tab starts (Save in the detail view and in a tile's
// menu). The daemon answers `{job}` and then notifies progress and the end; a notification
// can arrive before the answer that names its job, so those are held until it does. One
// renderer shows a job's state the same way wherever it was started.
'use strict';

class Downloads {
  constructor(session) {
    this.session = session;
    this.watchers = new Map();   // job → onEvent(name, params)
    this.early = new Map();      // job → notifications that came before its answer
    for (const name of ['download.progress', 'download.finished', 'download.failed']) {
      session.on(name, (p) => this.route(name, p));
    }
  }

  /**
   * Saves `photo` full size in the daemon's download folder; `onEvent(name, params)` gets its
   * notifications. Resolves to the job id; rejects with the daemon's error (e.g. a photo
   * it does not know).
   */
  async start(photo, onEvent) {
    const { job } = await this.session.call('download', { photo: photo.id, variant: 'full' });
    this.watchers.set(job, onEvent);
    const held = this.early.get(job) || [];
    this.early.delete(job);
    for (const [name, p] of held) this.route(name, p);
    return job;
  }

  route(name, p) {
    const onEvent = this.watchers.get(p.job);
    if (!onEvent) {
      if (!this.early.has(p.job)) {
        // Only this tab's own jobs are notified here; the bound is against a daemon that never answers.
        if (this.early.size >= 64) this.early.delete(this.early.keys().next().value);
        this.early.set(p.job, []);
      }
      this.early.get(p.job).push([name, p]);
      return;
    }
    if (name !== 'download.progress') this.watchers.delete(p.job);
    onEvent(name, p);
  }
}

/** Shows a download notification in `state` (text, and the saved path as `code.saved-path`) and `bar` (a progress fill). */
function renderDownload(name, p, state, bar) {
  if (name === 'download.progress') {
    if (bar) bar.style.width = p.total > 0 ? `${Math.min(100, (100 * p.received) / p.total).toFixed(1)}%` : '30%';
    state.textContent = `saving ${formatBytes(p.received)}${p.total > 0 ? ' of ' + formatBytes(p.total) : ''}`
      + (p.bytesPerSecond > 0 ? ` at ${formatBytes(p.bytesPerSecond)}/s` : '');
  } else if (name === 'download.finished') {
    if (bar) bar.style.width = '100%';
    const done = document.createElement('span');
    done.textContent = `Saved ${p.width}×${p.height}, ${formatBytes(p.bytes)} to `;
    const path = document.createElement('code');
    path.className = 'saved-path';
    path.textContent = p.path;
    state.replaceChildren(done, path);
  } else {
    if (bar) bar.style.width = '0%';
    state.textContent = `save failed: ${p.error && p.error.message || 'unknown error'}`;
  }
}

function formatBytes(n) {
  if (!(n >= 0)) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}
