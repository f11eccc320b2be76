/// index.html: the page's structure. Scripts and styles are separate files of the same
/// origin (the Content-Security-Policy allows no inline script).
enum GalleryPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>imagecached gallery</title>
<link rel="stylesheet" href="app.css">
<script src="rpc.js" defer></script>
<script src="masonry.js" defer></script>
<script src="tiles.js" defer></script>
<script src="downloads.js" defer></script>
<script src="detail.js" defer></script>
<script src="metadata.js" defer></script>
<script src="menu.js" defer></script>
<script src="collection.js" defer></script>
<script src="app.js" defer></script>
</head>
<body>
<header id="welcome">
  <div class="bar">
    <a id="home" href="#" class="brand" title="Back to the welcome screen">imagecached</a>
    <input id="query" type="search" placeholder="Search photos" autocomplete="off" spellcheck="false" aria-label="Search photos" autofocus>
    <select id="provider" aria-label="Provider"></select>
  </div>
  <div id="tools" class="tools">
    <input id="filter" type="search" placeholder="Filter by tag" autocomplete="off" spellcheck="false" aria-label="Filter by tag" aria-controls="grid">
    <span id="filter-count" class="count" aria-live="polite"></span>
    <button id="tags-toggle" type="button" aria-expanded="false" aria-controls="tags">All tags</button>
  </div>
  <section id="tags" class="tags-panel" hidden aria-label="All tags of the loaded results">
    <div id="tags-list"></div>
  </section>
  <p class="tagline">Search photos through your local imagecached daemon. Type three letters.</p>
  <p id="credit" class="credit"></p>
</header>
<div id="banner" hidden></div>
<p id="status" aria-live="polite"></p>
<main id="grid" aria-label="Photos"></main>
<p id="more" class="more" hidden>Loading more…</p>
<p id="end" class="end" hidden></p>
<footer><span id="version"></span> · a local page; photos are served by your daemon's cache</footer>

<div id="detail" hidden role="dialog" aria-modal="true" aria-label="Photo">
  <div class="panel">
    <div class="frame" data-detail="frame">
      <img data-detail="preview" class="preview" alt="">
      <img data-detail="image" class="large" alt="">
      <div class="progress"><div data-detail="progress"></div></div>
    </div>
    <aside>
      <button data-detail="close" class="close" aria-label="Close">×</button>
      <p class="by">Photo by <a data-detail="author" target="_blank" rel="noopener noreferrer"></a>
        on <a data-detail="provider" target="_blank" rel="noopener noreferrer"></a></p>
      <p data-detail="sponsored" class="sponsored-line"></p>
      <p data-detail="likes" class="likes"></p>
      <p data-detail="description" class="description"></p>
      <p data-detail="facts" class="facts"></p>
      <p data-detail="tags" class="tags"></p>
      <p><a data-detail="page" target="_blank" rel="noopener noreferrer">View on the provider's site ↗</a></p>
      <p data-detail="loading" class="loading"></p>
      <button data-detail="metadata" type="button" class="secondary">Metadata</button>
      <button data-detail="save" class="save">Save full size</button>
      <div class="save-progress"><div data-detail="save-bar"></div></div>
      <p data-detail="save-state" class="save-state" aria-live="polite"></p>
    </aside>
  </div>
</div>

<div id="meta" class="sheet" hidden role="dialog" aria-modal="true" aria-labelledby="meta-title">
  <div class="sheet-panel">
    <button data-meta="close" type="button" class="close" aria-label="Close">×</button>
    <h2 id="meta-title">Metadata</h2>
    <p data-meta="state" class="loading" aria-live="polite"></p>
    <dl data-meta="list"></dl>
  </div>
</div>

<div id="menu" class="menu" role="menu" hidden aria-label="Photo">
  <button type="button" role="menuitem" data-action="save">Save</button>
  <button type="button" role="menuitem" data-action="copy">Copy link</button>
  <button type="button" role="menuitem" data-action="metadata">Metadata</button>
</div>

<div id="notice" class="notice" role="status" aria-live="polite" hidden>
  <div data-notice="body"></div>
  <button data-notice="close" type="button" class="close" aria-label="Dismiss">×</button>
</div>
</body>
</html>
"""#
}
