// The columns. The same rule as the daemon's `layout` (each photo to the
// shortest column, leftmost on ties, keeping its aspect ratio), computed in the page so a
// window resize or a late `thumbnail.dimensions` re-places every tile at once.
'use strict';

const Masonry = {
  gap: 12,
  minColumnWidth: 220,
  maxColumns: 8,

  /** How many columns a grid `width` pixels wide gets. */
  columnsFor(width) {
    const n = Math.floor((width + this.gap) / (this.minColumnWidth + this.gap));
    return Math.max(1, Math.min(this.maxColumns, n));
  },

  /**
   * Frames {x, y, width, height} for items with {width, height} (null when unknown: a square).
   * Returns {frames, columnWidth, height}.
   */
  layout(items, width) {
    const columns = this.columnsFor(width);
    const columnWidth = (width - this.gap * (columns - 1)) / columns;
    const heights = new Array(columns).fill(0);
    const frames = items.map((item) => {
      let column = 0;
      for (let c = 1; c < columns; c++) if (heights[c] < heights[column] - 1e-9) column = c;
      const ratio = item.width > 0 && item.height > 0 ? item.height / item.width : 1;
      const height = Math.max(40, Math.min(columnWidth * 3, columnWidth * ratio));
      const y = heights[column] > 0 ? heights[column] + this.gap : 0;
      heights[column] = y + height;
      return { x: column * (columnWidth + this.gap), y, width: columnWidth, height, column };
    });
    return { frames, columnWidth, columns, height: Math.max(0, ...heights) };
  },
};
