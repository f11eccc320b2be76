/// app.css: a dark page that lets photos carry the colour.
enum GalleryStyle {
    static let css = #"""
:root {
  --bg: #111214; --fg: #e9e9ea; --muted: #9a9ca3; --accent: #f5a524; --panel: #1b1c20;
  --offline: #3a2f12; --error: #46191b;
  color-scheme: dark;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
a { color: inherit; }

#welcome { position: relative; min-height: 100vh; display: flex; flex-direction: column; align-items: center;
  justify-content: center; gap: 18px; padding: 24px; background: #1d1f24 center / cover no-repeat;
  transition: min-height .35s ease; }
#welcome.with-photo::before { content: ""; position: absolute; inset: 0;
  background: linear-gradient(180deg, rgba(0,0,0,.55), rgba(0,0,0,.25) 45%, rgba(0,0,0,.7)); }
#welcome > * { position: relative; }
.bar { display: flex; gap: 10px; align-items: center; width: min(720px, 100%); }
.brand { font-weight: 700; letter-spacing: .02em; text-decoration: none; font-size: 20px; white-space: nowrap; }
#query { flex: 1; min-width: 0; font: inherit; font-size: 18px; padding: 12px 16px; border-radius: 999px;
  border: 1px solid rgba(255,255,255,.25); background: rgba(20,20,24,.75); color: var(--fg); outline: none; }
#query:focus { border-color: var(--accent); box-shadow: 0 0 0 3px rgba(245,165,36,.25); }
#provider { font: inherit; padding: 10px 12px; border-radius: 999px; background: rgba(20,20,24,.75);
  color: var(--fg); border: 1px solid rgba(255,255,255,.25); }
.tagline { margin: 0; color: #d7d7da; text-shadow: 0 1px 3px rgba(0,0,0,.6); }
.credit { position: absolute !important; right: 16px; bottom: 12px; margin: 0; font-size: 12px; color: #ccc; }

body.searching #welcome { min-height: 0; position: sticky; top: 0; z-index: 5; padding: 12px 20px;
  background: rgba(17,18,20,.92) !important; backdrop-filter: blur(8px); border-bottom: 1px solid #23252a; }
body.searching #welcome::before, body.searching .tagline, body.searching .credit { display: none; }
body.searching .bar { width: 100%; }
body.searching #query { font-size: 16px; padding: 9px 14px; }

#banner { margin: 12px 20px 0; padding: 10px 14px; border-radius: 8px; background: var(--error); }
#banner[data-kind="offline"] { background: var(--offline); border: 1px solid #7a5d1a; }
#status { margin: 10px 20px; color: var(--muted); min-height: 1.4em; }

#grid { position: relative; margin: 0 20px; }
.sentinel, .end-sentinel { position: absolute; top: 0; left: 0; pointer-events: none; }
.end-sentinel { width: 1px; height: 1px; }
.tile { position: absolute; top: 0; left: 0; margin: 0; border-radius: 8px; overflow: hidden; cursor: zoom-in;
  will-change: transform; contain: strict; }
.tile img { width: 100%; height: 100%; object-fit: cover; display: block; opacity: 0; transition: opacity .25s ease; }
.tile[data-state="loaded"] img { opacity: 1; }
.tile figcaption { position: absolute; left: 0; right: 0; bottom: 0; padding: 22px 10px 8px; font-size: 13px;
  background: linear-gradient(transparent, rgba(0,0,0,.65)); opacity: 0; transition: opacity .2s; }
.tile:hover figcaption { opacity: 1; }
.tile .progress { position: absolute; left: 10px; right: 10px; bottom: 10px; height: 3px; border-radius: 2px;
  background: rgba(255,255,255,.18); opacity: 0; transition: opacity .2s; }
.tile.slow[data-state="loading"] .progress, .tile.slow[data-state="delivered"] .progress { opacity: 1; }
.progress > div, .save-progress > div { height: 100%; width: 0; background: var(--accent); border-radius: inherit; transition: width .15s linear; }
.tile .badge { position: absolute; top: 8px; left: 8px; font-size: 11px; text-transform: uppercase; letter-spacing: .05em;
  color: #fff; background: rgba(0,0,0,.55); border-radius: 4px; padding: 0 6px; }
.tile .badge:empty { display: none; }
#grid.stale .tile img { filter: saturate(.75); }
#grid.stale::before { content: "stale"; position: absolute; top: -30px; right: 0; font-size: 12px; text-transform: uppercase;
  letter-spacing: .08em; color: #f5c76a; border: 1px solid #7a5d1a; border-radius: 4px; padding: 1px 6px; }

.more, .end { text-align: center; color: var(--muted); margin: 28px 0; }
footer { text-align: center; color: #5d6068; font-size: 12px; padding: 28px 0 36px; }

#detail { position: fixed; inset: 0; z-index: 10; background: rgba(6,6,8,.88); display: flex; align-items: center;
  justify-content: center; padding: 24px; }
#detail[hidden] { display: none; }
body.detail-open { overflow: hidden; }
.panel { display: flex; gap: 0; max-width: min(1400px, 100%); max-height: 100%; background: var(--panel);
  border-radius: 12px; overflow: hidden; box-shadow: 0 20px 60px rgba(0,0,0,.6); }
.frame { position: relative; overflow: hidden; flex: 1 1 auto; max-height: calc(100vh - 48px); max-width: calc(100vw - 420px);
  background: #000; display: flex; align-items: center; justify-content: center; min-width: 280px; }
.frame img { display: block; max-width: 100%; max-height: calc(100vh - 48px); width: 100%; height: 100%; object-fit: contain; }
.frame .preview { position: absolute; inset: 0; filter: blur(14px); transform: scale(1.05); opacity: .8; }
.frame .large { position: relative; opacity: 0; transition: opacity .3s; }
.frame[data-state="loaded"] .large { opacity: 1; }
.frame .progress { position: absolute; left: 16px; right: 16px; bottom: 16px; height: 4px; background: rgba(255,255,255,.2); border-radius: 2px; }
.frame[data-state="loaded"] .progress { display: none; }
aside { width: 340px; flex: 0 0 340px; padding: 22px 22px 18px; overflow-y: auto; position: relative; }
.close { position: absolute; top: 10px; right: 12px; font-size: 26px; line-height: 1; background: none; color: var(--muted);
  border: 0; cursor: pointer; }
.by { margin-top: 6px; font-size: 16px; }
.by a { font-weight: 600; }
.likes { color: #ff8b8b; font-weight: 600; }
.description { font-size: 17px; }
.facts, .tags, .loading { color: var(--muted); font-size: 13px; }
.save { font: inherit; font-weight: 600; background: var(--accent); color: #201400; border: 0; border-radius: 8px;
  padding: 10px 16px; cursor: pointer; margin-top: 8px; }
.save:disabled { opacity: .6; cursor: progress; }
.save-progress { height: 4px; background: #2a2c31; border-radius: 2px; margin-top: 12px; }
.save-state { font-size: 13px; color: var(--muted); word-break: break-all; }
.save-state code { color: var(--fg); }

.tools { display: none; gap: 10px; align-items: center; width: 100%; }
body.searching .tools { display: flex; }
#filter { flex: 0 1 320px; min-width: 0; font: inherit; font-size: 14px; padding: 6px 12px; border-radius: 999px;
  border: 1px solid rgba(255,255,255,.22); background: rgba(20,20,24,.75); color: var(--fg); outline: none; }
#filter:focus { border-color: var(--accent); box-shadow: 0 0 0 3px rgba(245,165,36,.25); }
.count { color: var(--muted); font-size: 13px; font-variant-numeric: tabular-nums; }
#tags-toggle, .secondary { font: inherit; font-size: 13px; padding: 6px 12px; border-radius: 999px; cursor: pointer;
  background: transparent; color: var(--fg); border: 1px solid rgba(255,255,255,.25); }
#tags-toggle[aria-expanded="true"] { border-color: var(--accent); color: var(--accent); }
.tags-panel { width: 100%; max-height: 38vh; overflow-y: auto; padding: 4px 0; }
.tags-panel[hidden], body:not(.searching) .tags-panel { display: none; }
#tags-list { display: flex; flex-wrap: wrap; gap: 6px; }
.tag { font: inherit; font-size: 13px; display: inline-flex; gap: 6px; align-items: center; padding: 3px 10px;
  border-radius: 999px; background: #24262c; color: var(--fg); border: 1px solid #33363d; cursor: pointer; }
.tag:hover, .tag:focus-visible, .tag[aria-pressed="true"] { border-color: var(--accent); outline: none; }
.tag .n { color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.tags-panel .none { color: var(--muted); margin: 4px 0; }

.tile { touch-action: manipulation; -webkit-touch-callout: none; user-select: none; -webkit-user-select: none; }
.tile:focus { outline: none; }
.tile:focus-visible { box-shadow: inset 0 0 0 3px var(--accent); }
.tile:focus-visible figcaption { opacity: 1; }
.tile .label { position: absolute; top: 8px; right: 8px; font-size: 11px; font-weight: 600; color: #1a1a1a;
  background: rgba(255,255,255,.88); border-radius: 4px; padding: 1px 7px; }
.tile .label:empty { display: none; }
.sponsored-line { color: var(--muted); font-size: 13px; }
.sponsored-line:empty { display: none; }
.secondary { margin: 8px 8px 0 0; }
.save[hidden] { display: none; }

.menu { position: fixed; z-index: 30; min-width: 170px; padding: 6px; background: #23252b; border: 1px solid #393c44;
  border-radius: 10px; box-shadow: 0 12px 32px rgba(0,0,0,.55); }
.menu[hidden] { display: none; }
.menu button { display: block; width: 100%; text-align: left; font: inherit; padding: 8px 12px; border: 0; border-radius: 6px;
  background: none; color: var(--fg); cursor: pointer; }
.menu button[hidden] { display: none; }
.menu button:disabled { color: #60636b; cursor: default; }
.menu button:not(:disabled):hover, .menu button:focus-visible { background: var(--accent); color: #201400; outline: none; }

.sheet { position: fixed; inset: 0; z-index: 20; background: rgba(6,6,8,.7); display: flex; align-items: center; justify-content: center; padding: 24px; }
.sheet[hidden] { display: none; }
.sheet-panel { position: relative; width: min(520px, 100%); max-height: 100%; overflow-y: auto; background: var(--panel);
  border-radius: 12px; padding: 20px 24px; box-shadow: 0 20px 60px rgba(0,0,0,.6); }
.sheet-panel h2 { margin: 0 0 8px; font-size: 18px; }
.sheet-panel dl { margin: 0; display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; }
.sheet-panel .row { display: contents; }
.sheet-panel dt { color: var(--muted); }
.sheet-panel dd { margin: 0; overflow-wrap: anywhere; }
.sheet-panel dd .tag { margin: 0 4px 4px 0; }

.notice { position: fixed; z-index: 25; left: 50%; bottom: 20px; transform: translateX(-50%); max-width: min(720px, calc(100% - 32px));
  display: flex; gap: 10px; align-items: center; padding: 10px 12px 10px 16px; background: #23252b; border: 1px solid #393c44;
  border-radius: 10px; box-shadow: 0 12px 32px rgba(0,0,0,.55); font-size: 14px; }
.notice[hidden] { display: none; }
.notice[data-kind="save-failed"] { border-color: #8a3a3d; }
.notice [data-notice="body"] { overflow-wrap: anywhere; }
.notice .close { position: static; font-size: 22px; }
.notice code { color: var(--fg); }
.copy-field { font: inherit; font-size: 13px; width: min(460px, 60vw); padding: 4px 8px; border-radius: 6px;
  border: 1px solid var(--accent); background: #15161a; color: var(--fg); }

@media (max-width: 900px) {
  .panel { flex-direction: column; overflow-y: auto; }
  .frame { max-width: 100%; }
  aside { width: auto; flex: none; }
}
"""#
}
