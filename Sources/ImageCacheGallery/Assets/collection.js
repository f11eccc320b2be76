// The loaded results as a collection. "Filter by tag" keeps in the grid only
// the photos with a tag that starts with the typed text (at the start of any of the tag's
// words, case aside), as you type, with a count ("12 of 30"); the grid lays the rest out again
// without gaps. "All tags" lists every tag of the loaded results with how many photos carry
// it, most used first (then by name); choosing one shows exactly the photos with that tag.
'use strict';

/** A photo's tags, lower-cased, each once. */
function photoTags(photo) {
  if (!Array.isArray(photo.tags)) return [];
  return [...new Set(photo.tags.filter((t) => typeof t === 'string' && t.trim()).map((t) => t.trim().toLowerCase()))];
}

/** Whether `tag` (lower case) has a word that starts with `text` (lower case): "la" finds "lake" and "mountain lake". */
function tagMatches(tag, text) {
  if (tag.startsWith(text)) return true;
  for (let i = 1; i < tag.length; i++) {
    if (/[\s\-_\/,.]/.test(tag[i - 1]) && tag.startsWith(text, i)) return true;
  }
  return false;
}

/** [tag, count] for every tag of `photos`, most photos first, then by name. */
function tagCounts(photos) {
  const counts = new Map();
  for (const photo of photos) for (const tag of photoTags(photo)) counts.set(tag, (counts.get(tag) || 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

class TagFilter {
  /** elements: {input, count, toggle, panel, list}; onChange(active): the filter was set or cleared. */
  constructor(grid, elements, onChange) {
    this.grid = grid;
    this.e = elements;
    this.onChange = onChange;
    this.text = '';
    this.exact = false;   // chosen from "All tags": that tag only, not every tag it starts
    elements.input.addEventListener('input', () => this.set(elements.input.value, false));
    elements.input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && elements.input.value) { e.preventDefault(); this.choose(''); }
    });
    elements.toggle.addEventListener('click', () => this.showPanel(elements.panel.hidden));
    elements.panel.addEventListener('keydown', (e) => { if (e.key === 'Escape') { this.showPanel(false); elements.toggle.focus(); } });
  }

  /** Whether a filter is set. */
  get active() { return this.text !== ''; }

  /** Sets the filter to `value` (typed: any tag a word of which starts with it; `exact`: that tag). */
  set(value, exact) {
    const text = value.trim().toLowerCase();
    if (text === this.text && exact === this.exact) return;
    const was = this.active;
    this.text = text;
    this.exact = exact && text !== '';
    this.reapply();
    if (was !== this.active || this.active) this.onChange(this.active);
  }

  /** Applies the filter again (a photo learnt its tags from `photo.get`). */
  reapply() {
    const { text, exact } = this;
    this.grid.setFilter(text ? (photo) => photoTags(photo).some((t) => (exact ? t === text : tagMatches(t, text))) : null);
    this.refresh();
  }

  /** Sets the input and the filter to one tag (from "All tags" or the metadata panel); '' clears it. */
  choose(tag) {
    this.e.input.value = tag;
    this.set(tag, true);
  }

  /** A new search (or none): no filter, the panel closed, the count of what the grid holds now. */
  clear() {
    this.e.input.value = '';
    this.set('', false);
    this.showPanel(false);
    this.refresh();
  }

  /** After photos came or went: the count and, when open, the panel. */
  refresh() {
    const total = this.grid.items.length;
    const shown = this.grid.shownCount;
    this.e.count.textContent = total ? `${shown} of ${total}` : '';
    this.e.count.dataset.shown = String(shown);
    this.e.count.dataset.total = String(total);
    if (!this.e.panel.hidden) this.renderPanel();
  }

  showPanel(open) {
    this.e.panel.hidden = !open;
    this.e.toggle.setAttribute('aria-expanded', String(open));
    if (open) this.renderPanel();
  }

  renderPanel() {
    const counts = tagCounts(this.grid.items.map((i) => i.photo));
    const list = this.e.list;
    list.replaceChildren();
    if (!counts.length) {
      const none = document.createElement('p');
      none.className = 'none';
      none.textContent = this.grid.items.length ? 'These results carry no tags.' : 'No results yet.';
      list.appendChild(none);
      return;
    }
    for (const [tag, n] of counts) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'tag';
      b.dataset.tag = tag;
      b.dataset.count = String(n);
      b.setAttribute('aria-pressed', String(this.exact && this.text === tag));
      const name = document.createElement('span');
      name.textContent = tag;
      const badge = document.createElement('span');
      badge.className = 'n';
      badge.textContent = String(n);
      b.append(name, badge);
      b.title = `${n} photo${n === 1 ? '' : 's'} tagged “${tag}”`;
      b.addEventListener('click', () => {
        this.choose(tag);
        this.showPanel(false);
        this.e.input.focus();
      });
      list.appendChild(b);
    }
  }
}
