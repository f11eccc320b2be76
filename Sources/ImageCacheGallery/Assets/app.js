// The page. Connects its session, paints the welcome screen (a photo of the recent
// feed), searches as the user types (3 characters, the daemon's debounce and one `channel`,
// so only the last keystroke's query reaches the provider), pages until `totalPages`, and
// says plainly when results are stale or the network is unavailable. It joins the grid to the
// collection's parts: the tag filter, a tile's menu, the metadata panel and Save.
'use strict';

const PER_PAGE = 30;
const DEBOUNCE_MS = 300;

const $ = (selector) => document.querySelector(selector);

function graphemes(text) {
  if (typeof Intl !== 'undefined' && Intl.Segmenter) return [...new Intl.Segmenter().segment(text)].length;
  return [...text].length;
}

class GalleryApp {
  constructor() {
    this.query = '';
    this.provider = null;
    this.generation = 0;
    this.page = 0;
    this.totalPages = null;
    this.total = null;
    this.loadingPage = false;
    this.pendingSearch = null;   // request id of the typeahead search in flight
    this.pages = [];             // pages answered for the current query (read by the tests)
  }

  async start() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const base = location.pathname.endsWith('/') ? location.pathname : location.pathname + '/';
    this.session = new DaemonSession(`${scheme}//${location.host}${base}ws`);
    this.session.on('gallery.daemonUnavailable', (p) => this.banner('error', p.message));
    this.session.onclose = () => this.banner('error', 'The connection to imagecache gallery closed. Restart it and reload this page.');
    try {
      await this.session.open();
    } catch (e) {
      this.banner('error', 'Cannot reach imagecache gallery. Is it still running?');
      return;
    }
    this.grid = new Grid(this.session, $('#grid'), {
      onOpen: (photo, tile) => this.detail.open(photo, tile),
      onMenu: (tile, at, via, heldMs) => this.menu.open(tile, at, via, heldMs),
      onNearEnd: () => this.loadNextPage(),
      onTileError: (error) => { if (error.kind === 'network_unavailable') this.offlineNotice(); },
    });
    this.downloads = new Downloads(this.session);
    this.notice = new Notice($('#notice'));
    this.metadata = new MetadataPanel(this.session, $('#meta'), {
      onTag: (tag) => { this.detail.close(); this.filter.choose(tag); },
      onDetails: (full) => this.learn(full),
    });
    this.detail = new DetailView(this.session, $('#detail'), this.downloads, {
      onMetadata: (photo, opener) => this.metadata.open(photo, opener),
      onDetails: (full) => this.learn(full),
    });
    this.menu = new PhotoMenu($('#menu'), {
      save: (photo) => this.save(photo),
      copy: (photo) => copyText(attributed(photo.pageURL, photo.provider), this.notice),
      metadata: (photo, opener) => this.metadata.open(photo, opener),
    });
    this.filter = new TagFilter(this.grid, {
      input: $('#filter'), count: $('#filter-count'), toggle: $('#tags-toggle'), panel: $('#tags'), list: $('#tags-list'),
    }, (active) => this.filtered(active));
    window.gallery = this;

    const hello = await this.session.call('hello', {});
    $('#version').textContent = `${hello.name} ${hello.version}`;
    const select = $('#provider');
    for (const p of hello.providers) {
      const option = document.createElement('option');
      option.value = p.name;
      option.textContent = providerName(p.name) + (p.configured ? '' : ' (no key)');
      option.disabled = !p.configured;
      select.appendChild(option);
    }
    const first = hello.providers.find((p) => p.configured);
    this.provider = first ? first.name : null;
    if (this.provider) select.value = this.provider;
    select.addEventListener('change', () => {
      this.provider = select.value;
      if (this.query) this.search(this.query, 0); else this.welcome();
    });
    const input = $('#query');
    input.addEventListener('input', () => this.typed(input.value));
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter') this.typed(input.value, true); });
    $('#home').addEventListener('click', (e) => { e.preventDefault(); input.value = ''; this.typed(''); });
    document.body.dataset.ready = 'true';
    if (!this.provider) { this.banner('error', 'No provider has an API key: see the README, "Using real providers".'); return; }
    this.welcome();
  }

  /** The welcome screen's background: a photo from the provider's recent feed. */
  async welcome() {
    const generation = this.generation;
    try {
      const recent = await this.session.call('search', { feed: 'recent', provider: this.provider, perPage: 10 });
      if (generation !== this.generation || !recent.photos.length) return;
      const photo = recent.photos.find((p) => p.width > p.height) || recent.photos[0];
      const size = THUMB_SIZES.find((s) => s >= Math.min(1600, window.innerWidth * (window.devicePixelRatio || 1))) || 1080;
      const thumb = await this.session.call('thumbnail.show', { slot: 0, view: 'welcome', photo: photo.id, size });
      if (generation !== this.generation) return;
      const hero = $('#welcome');
      hero.style.backgroundImage = `url("${imageURL(thumb.path)}")`;
      hero.classList.add('with-photo');
      const credit = $('#credit');
      credit.replaceChildren();
      const by = document.createElement('a');
      by.textContent = photo.author.name;
      const profile = attributed(photo.author.profileURL, photo.provider);
      if (profile) by.href = profile;
      const site = document.createElement('a');
      site.textContent = providerName(photo.provider);
      site.href = attributed(PROVIDER_HOMES[photo.provider], photo.provider) || '#';
      credit.append('Photo by ', by, ' on ', site);
      for (const a of credit.querySelectorAll('a')) { a.target = '_blank'; a.rel = 'noopener noreferrer'; }
    } catch (error) {
      if (error.kind === 'network_unavailable') this.offlineNotice();
    }
  }

  /** Each keystroke: a search from 3 characters, debounced by the daemon on one channel. */
  typed(text, now = false) {
    const query = text.trim();
    if (graphemes(query) < 3) {
      if (this.pendingSearch !== null) {
        this.session.call('cancel', { id: this.pendingSearch }).catch(() => {});
        this.pendingSearch = null;
      }
      if (!query) {
        this.generation++;
        this.query = '';
        document.body.classList.remove('searching');
        this.grid.reset(false);
        this.filter.clear();
        this.status('');
        this.banner(null);
      } else {
        this.status('Type at least 3 characters.');
      }
      return;
    }
    if (query === this.query && !now) return;
    this.search(query, now ? 0 : DEBOUNCE_MS);
  }

  async search(query, debounceMs) {
    const generation = ++this.generation;
    this.query = query;
    // No next page until this query's first one has answered (the old query's count is not its).
    this.page = 0;
    this.totalPages = null;
    this.pages = [];
    document.body.classList.add('searching');
    this.status('Searching…');
    const request = this.session.request('search', {
      query, provider: this.provider, page: 1, perPage: PER_PAGE, debounceMs, channel: 'typeahead',
    });
    this.pendingSearch = request.id;
    let result;
    try {
      result = await request.answer;
      this.note({ id: request.id, query, current: generation === this.generation, outcome: result.stale ? 'stale' : 'ok' });
    } catch (error) {
      this.note({ id: request.id, query, current: generation === this.generation, outcome: `${error.kind} ${error.data.reason || ''}` });
      if (generation !== this.generation) return;
      if (error.kind === 'cancelled') {
        // Only a newer search supersedes ours (the daemon orders a channel's searches by
        // arrival), and that one bumped the generation: this is another cancellation.
        this.status('The search was cancelled; press Enter to search again.');
        return;
      }
      this.pendingSearch = null;
      this.grid.reset(false);
      this.filter.clear();
      this.pages = [];
      this.failed(error, query);
      return;
    } finally {
      if (this.pendingSearch === request.id) this.pendingSearch = null;
    }
    if (generation !== this.generation) return;
    this.banner(null);
    this.pages = [result.page];
    this.page = result.page;
    this.total = result.total;
    this.totalPages = result.totalPages;
    this.grid.reset(result.stale);
    this.filter.clear();
    this.grid.append(result.photos);
    this.filter.refresh();
    if (result.stale) this.staleNotice();
    this.summary(result);
    window.scrollTo(0, 0);
  }

  /** The next page, while there is one (`page < totalPages`). */
  async loadNextPage() {
    if (!this.query || this.loadingPage || this.totalPages === null || this.page >= this.totalPages) return;
    // The filter is over the loaded results: a filtered grid is short, and paging on while it
    // stays short would fetch every page. Clearing it pages on.
    if (this.filter.active) return;
    const generation = this.generation;
    this.loadingPage = true;
    $('#more').hidden = false;
    try {
      // No channel: a page must not supersede the typeahead, nor be superseded by it.
      const result = await this.session.call('search', { query: this.query, provider: this.provider, page: this.page + 1, perPage: PER_PAGE });
      if (generation !== this.generation) return;
      this.page = result.page;
      this.pages.push(result.page);
      this.totalPages = result.totalPages;
      this.grid.append(result.photos);
      this.filter.refresh();
      if (result.stale) { this.grid.setStale(true); this.staleNotice(); }
      this.summary(result);
    } catch (error) {
      if (generation === this.generation) this.failed(error, this.query, true);
    } finally {
      this.loadingPage = false;
      $('#more').hidden = true;
    }
    // Still near the end (a tall window, short pages)? The observer fires only on a change.
    if (generation === this.generation && this.grid.nearEnd()) this.loadNextPage();
  }

  /** The filter was set or cleared: back to the top of the grid; once cleared, paging goes on. */
  filtered(active) {
    const top = $('#grid').getBoundingClientRect().top + scrollY - $('#welcome').offsetHeight - 12;
    if (scrollY > top) window.scrollTo(0, Math.max(0, top));
    if (!active && this.grid.nearEnd()) this.loadNextPage();
  }

  /**
   * photo.get answered: tags it knows and the search did not give join the grid's copy of the
   * photo, so that filtering by a tag the metadata panel shows keeps that photo.
   */
  learn(full) {
    const item = this.grid.items.find((i) => i.photo.id === full.id);
    if (!item || !Array.isArray(full.tags)) return;
    const known = Array.isArray(item.photo.tags) ? item.photo.tags : [];
    const tags = [...new Set([...known, ...full.tags.filter((t) => typeof t === 'string')])];
    if (tags.length === known.length) return;
    item.photo.tags = tags;
    this.filter.reapply();
  }

  /** Save from a tile's menu: a `download`, its progress and where it went in the notice. */
  save(photo) {
    this.notice.show('saving', `Saving ${photo.author && photo.author.name ? 'the photo by ' + photo.author.name : 'the photo'}…`);
    this.downloads.start(photo, (name, p) => {
      const body = this.notice.show(name === 'download.finished' ? 'saved' : name === 'download.failed' ? 'save-failed' : 'saving');
      renderDownload(name, p, body, null);
    }).catch((error) => {
      this.notice.show('save-failed', `Could not save: ${error.message}`);
    });
  }

  summary(result) {
    const shown = this.grid.items.length;
    const last = this.totalPages !== null && this.page >= this.totalPages;
    const text = `${providerName(result.provider)} · “${this.query}” · ${result.total.toLocaleString()} results · page ${this.page} of ${this.totalPages}`;
    this.status(text);
    const end = $('#end');
    end.hidden = !last;
    end.textContent = shown ? `That is all: ${shown} photos, ${this.totalPages} page${this.totalPages === 1 ? '' : 's'}.` : 'No photos match.';
  }

  failed(error, query, nextPage = false) {
    switch (error.kind) {
      case 'network_unavailable':
        if (nextPage) {
          this.banner('offline', `The network is unavailable: page ${this.page + 1} of “${query}” is not in the cache. Scroll again once it is back.`);
          break;
        }
        this.status('');
        this.banner('offline', `The network is unavailable: “${query}” has not been searched before, so there is nothing saved to show. Searches you made earlier still open from the cache.`);
        break;
      case 'rate_limited':
        this.banner('error', `The provider's rate limit is reached; try again in ${error.data.retryAfter || 'a few'} seconds.`);
        break;
      case 'provider_unavailable':
        this.banner('error', error.message);
        break;
      case 'closed':
        break;
      default:
        this.banner('error', `Search failed: ${error.message}`);
    }
  }

  staleNotice() {
    this.banner('offline', 'Offline: these results were saved earlier and may be out of date (stale). Photos come from the cache.');
  }

  offlineNotice() {
    if (!$('#banner').hidden) return;
    this.banner('offline', 'The network is unavailable: only photos already in the cache can be shown.');
  }

  banner(kind, text) {
    const banner = $('#banner');
    banner.hidden = !kind;
    banner.dataset.kind = kind || '';
    banner.textContent = text || '';
  }

  status(text) { $('#status').textContent = text; }

  /** The last answers to typeahead searches, newest last (read by the tests' diagnostics). */
  note(entry) {
    this.searchLog = (this.searchLog || []).concat([entry]).slice(-20);
  }
}

window.addEventListener('DOMContentLoaded', () => { new GalleryApp().start(); });
