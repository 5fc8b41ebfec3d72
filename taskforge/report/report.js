// The report's two behaviours: sortable tables and the task-card filter. No network, no library.
"use strict";

// A click on a header sorts its table by that column; again, the other way. Cells that are
// all numbers (a trailing % allowed, "-" for none) sort as numbers.
function sortValue(cell) {
  const text = cell.textContent.trim();
  const number = text === "" ? NaN : Number(text.replace(/%$/, ""));
  return { text, number: text === "-" ? -Infinity : number };
}

document.querySelectorAll("table.sortable").forEach((table) => {
  table.querySelectorAll("th").forEach((th, column) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      const values = rows.map((row) => sortValue(row.cells[column]));
      const numeric = values.every((v) => !Number.isNaN(v.number));
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach((other) => other.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const order = rows.map((row, i) => [row, values[i]]).sort((a, b) => {
        const diff = numeric ? a[1].number - b[1].number : a[1].text.localeCompare(b[1].text);
        return ascending ? diff : -diff;
      });
      order.forEach(([row]) => body.appendChild(row));
    });
  });
});

// The task cards: every word typed must occur in a card's id, symbols, paths or statement,
// and the card must match the chosen strategy and source.
const filterInput = document.getElementById("task-filter");
if (filterInput) {
  const strategy = document.getElementById("strategy-filter");
  const repo = document.getElementById("repo-filter");
  const count = document.getElementById("task-count");
  const cards = Array.from(document.querySelectorAll("article.card"));
  const apply = () => {
    const words = filterInput.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    cards.forEach((card) => {
      const match = words.every((w) => card.dataset.search.includes(w)) &&
        (!strategy.value || card.dataset.strategy === strategy.value) &&
        (!repo.value || card.dataset.repo === repo.value);
      card.hidden = !match;
      shown += match ? 1 : 0;
    });
    count.textContent = `${shown} of ${cards.length} tasks`;
  };
  filterInput.addEventListener("input", apply);
  strategy.addEventListener("change", apply);
  repo.addEventListener("change", apply);
}
