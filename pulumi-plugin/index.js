// Entry of the rayshift Pulumi plugin package: runs the provider that serves the schema and
// constructs the components of rayshift/pulumi (lib/pulumi/plugin/provider.ts). It exports nothing:
// exported component classes would make Pulumi's plugin runner host them itself.
require('../build/lib/pulumi/plugin/provider.js').main(process.argv.slice(2));
