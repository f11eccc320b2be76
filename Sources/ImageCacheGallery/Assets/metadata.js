// Everything `photo.get` knows about one photo, as a labelled list in a dialog:
// camera and exposure, location, the times with their names ("Taken" when the camera took
// it, "Uploaded" when it was posted; a row is left out when the provider does not say), the
// counts, tags (a click filters the grid by one), the author, and the licence with the
// attribution link. The search's copy of the photo is shown at once and replaced by the
// daemon's answer, which the gallery's relay passes like any request.
'use strict';

/** Where each provider's licence is explained; Flickr photos carry their own, named on their page. */
const LICENCES = {
  unsplash: { name: 'Unsplash License', url: 'https://unsplash.com/license' },
  pixabay: { name: 'Pixabay Content License', url: 'https://pixabay.com/service/license-summary/' },
};

function externalLink(text, url) {
  const a = document.createElement('a');
  a.textContent = text;
  if (url) { a.href = url; a.target = '_blank'; a.rel = 'noopener noreferrer'; }
  return a;
}

function timeElement(iso) {
  const t = document.createElement('time');
  t.dateTime = iso;
  t.textContent = formatTime(iso);
  return t;
}

function formatCount(n) { return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString() : null; }

class MetadataPanel {
  /** handlers: {onTag(tag): a tag was clicked, onDetails(photo): photo.get answered}. */
  constructor(session, root, handlers) {
    this.session = session;
    this.root = root;
    this.handlers = handlers;
    this.photo = null;
    this.opener = null;
    this.el = (name) => root.querySelector(`[data-meta="${name}"]`);
    this.el('close').addEventListener('click', () => this.close());
    root.addEventListener('click', (e) => { if (e.target === root) this.close(); });
    root.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape') return;
      e.stopPropagation();   // the detail view below stays open
      this.close();
    });
  }

  /** Shows `photo` (as the search gave it) at once, then `photo.get`'s answer. */
  open(photo, opener) {
    this.photo = photo;
    this.opener = opener || null;
    this.root.hidden = false;
    this.root.dataset.state = 'loading';
    this.render(photo);
    this.el('state').textContent = 'asking the daemon…';
    this.el('close').focus();
    this.session.call('photo.get', { photo: photo.id }).then((full) => {
      if (!this.photo || this.photo.id !== photo.id) return;
      this.photo = full;
      this.handlers.onDetails(full);
      this.render(full);
      this.el('state').textContent = '';
      this.root.dataset.state = 'loaded';
    }, (error) => {
      if (!this.photo || this.photo.id !== photo.id) return;
      this.el('state').textContent = error.kind === 'network_unavailable'
        ? 'The network is unavailable and the daemon has no details saved for this photo.' : `photo.get failed: ${error.message}`;
      this.root.dataset.state = 'failed';
    });
  }

  close() {
    if (this.root.hidden) return;
    this.root.hidden = true;
    this.photo = null;
    if (this.opener && document.contains(this.opener)) this.opener.focus();
    this.opener = null;
  }

  /** The rows, in reading order; a row whose value is unknown is left out. */
  rows(photo) {
    const exif = photo.exif || {};
    const location = photo.location || {};
    const model = exif.model && exif.make && !String(exif.model).startsWith(exif.make) ? `${exif.make} ${exif.model}` : exif.model || exif.make;
    const rows = [
      ['sponsored', 'Sponsored', photo.sponsored === true ? (photo.sponsor ? `by ${photo.sponsor}` : 'yes, a paid placement') : null],
      ['media', 'Media', photo.media === 'video' ? 'Video' : null],
      ['description', 'Description', photo.description || null],
      ['camera', 'Camera', model || null],
      ['exposureTime', 'Exposure', exif.exposureTime ? `${exif.exposureTime} s` : null],
      ['aperture', 'Aperture', exif.aperture ? `ƒ/${exif.aperture}` : null],
      ['focalLength', 'Focal length', exif.focalLength ? `${exif.focalLength} mm` : null],
      ['iso', 'ISO', exif.iso ? String(exif.iso) : null],
      ['location', 'Location', [location.city, location.country].filter(Boolean).join(', ') || null],
      ['taken', 'Taken', photo.takenAt ? timeElement(photo.takenAt) : null],
      ['uploaded', 'Uploaded', uploadedAt(photo) ? timeElement(uploadedAt(photo)) : null],
      ['size', 'Size', photo.width > 0 && photo.height > 0 ? `${photo.width} × ${photo.height} px` : null],
      ['views', 'Views', formatCount(photo.views)],
      ['downloads', 'Downloads', formatCount(photo.downloads)],
      ['likes', 'Likes', formatCount(photo.likes)],
      ['tags', 'Tags', this.tags(photo.tags)],
      ['author', 'Author', photo.author && photo.author.name
        ? externalLink(photo.author.name, attributed(photo.author.profileURL, photo.provider)) : null],
      ['licence', 'Licence', this.licence(photo)],
      ['attribution', 'Attribution', this.attribution(photo)],
    ];
    return rows.filter(([, , value]) => value !== null && value !== undefined);
  }

  render(photo) {
    const list = this.el('list');
    list.replaceChildren();
    for (const [field, label, value] of this.rows(photo)) {
      const row = document.createElement('div');
      row.className = 'row';
      row.dataset.field = field;
      const dt = document.createElement('dt');
      dt.textContent = label;
      const dd = document.createElement('dd');
      if (typeof value === 'string') dd.textContent = value; else dd.append(value);
      row.append(dt, dd);
      list.appendChild(row);
    }
  }

  tags(tags) {
    if (!Array.isArray(tags) || !tags.length) return null;
    const box = document.createDocumentFragment();
    for (const tag of tags) {
      if (typeof tag !== 'string' || !tag) continue;
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'tag';
      b.dataset.tag = tag;
      b.textContent = tag;
      b.title = `Show only the loaded photos tagged “${tag}”`;
      b.addEventListener('click', () => { this.close(); this.handlers.onTag(tag); });
      box.appendChild(b);
    }
    return box.childNodes.length ? box : null;
  }

  licence(photo) {
    const known = LICENCES[photo.provider];
    if (known) return externalLink(known.name, attributed(known.url, photo.provider));
    return photo.provider === 'flickr' ? 'chosen by the photographer: see the photo’s page' : null;
  }

  /** "Photo by X on Provider", each linked (Unsplash's links with its attribution parameters), and the photo's page. */
  attribution(photo) {
    const box = document.createDocumentFragment();
    const by = externalLink(photo.author && photo.author.name || 'unknown author', attributed(photo.author && photo.author.profileURL, photo.provider));
    const site = externalLink(providerName(photo.provider), attributed(PROVIDER_HOMES[photo.provider], photo.provider));
    box.append(`${photo.media === 'video' ? 'Video' : 'Photo'} by `, by, ' on ', site);
    const page = attributed(photo.pageURL, photo.provider);
    if (page) {
      const a = externalLink('the photo’s page ↗', page);
      a.dataset.meta = 'page';
      box.append(' · ', a);
    }
    return box;
  }
}
