#!/usr/bin/env node
// The `rayshift` CLI; `npm run build` compiles it to build/.
require('../build/lib/cli/main.js').main();
