// Command gen converts the price data bundled in the npm package
// @pydantic/genai-prices (MIT licence) into this project's own compact price
// table, pricing/prices.json, whose format is documented in the pricing
// package (SPEC.md §4).
//
// The npm package bundles its data as a JavaScript array literal at the top of
// dist/index.js ("const E = [ ... ];"), in the same shape as the project's
// published data.json (v2): providers → models → prices, with tiered prices,
// dated and time-of-day price changes, and model-matching rules. Extract it to
// plain JSON with node, then run this command:
//
//	cd /tmp && npm pack @pydantic/genai-prices@0.1.8 && tar xzf pydantic-genai-prices-0.1.8.tgz
//	awk 'NR==1,/^];$/' package/dist/index.js > data.mjs
//	echo 'import fs from "node:fs"; fs.writeFileSync(process.argv[2], JSON.stringify(E));' >> data.mjs
//	node data.mjs /tmp/genai-prices.json
//	cd /work/main && go run ./pricing/internal/gen -in /tmp/genai-prices.json -out pricing/prices.json \
//	    -source '@pydantic/genai-prices@0.1.8 (npm, published 2026-09-23), https://github.com/pydantic/genai-prices' \
//	    -retrieved 2026-11-29
//
// What the conversion keeps and drops:
//
//   - Only the providers in keepProviders (those that users of pi, Atomic and
//     Prime run), in that order, which is the order provider aliases are tried.
//   - Per model: the per-million-token prices input_mtok, output_mtok,
//     cache_read_mtok, cache_write_mtok (the 5-minute cache write) and
//     cache_write_1h_mtok (the 1-hour cache write, SPEC.md §7.4; for Claude
//     models the dataset gives none for, derived as Anthropic documents it:
//     2 × input); web search, audio, image and per-request prices are
//     dropped because session usage does not carry those counts.
//   - A model is kept only when every price period has both an input and an
//     output price, or is empty: the dataset writes free models as {} and
//     prices them at 0, so they become explicit zeros. Models priced only per
//     page, per hour or per embedding input are dropped.
//   - Tiers: the dataset tiers each price key separately ("start" = the total
//     input tokens above which the tier price applies); they are merged into
//     whole rate sets, one per distinct threshold.
//   - Dated ("start_date") and UTC time-of-day price changes become "variants".
//   - Matching rules are copied as they are. The one regular expression that
//     Go's RE2 cannot run, a leading negative lookahead "^(?!X)", becomes
//     {"not": {"regex": "^(?:X)"}}, which means the same.
//   - Curated additions of ours (aliases, router settings) are listed in
//     curated below and in the "notes" field of the output.
//
// Imports: pricing (the table's format) and the standard library.
package main
