#!/usr/bin/env node
// The `rayshift` CLI; `npm run build` compiles it to build/. The binary composes the CLI (lib/cli)
// with the operator's subcommand (operator/), so that lib/ never imports operator/.
const { registerOperatorCommand } = require('../build/operator/command.js');
require('../build/lib/cli/main.js').main([registerOperatorCommand]);
