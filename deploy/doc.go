// Package deploy holds no code: it is where lockcheck's deployment files
// live, and its tests check them in `make test` (docs/scale.md):
//
//   - k8s/*.yaml, the Kubernetes manifests (one Job per cell, the sharded
//     matrix as an Indexed Job, the merge Job, the shared store and
//     `check serve`): each document decodes strictly into its k8s.io/api
//     type, and what the design rests on is asserted (the index is the
//     shard, no exit code is retried, one claim everywhere);
//   - github-actions/lockcheck-nightly.yml, an example workflow of a
//     sharded nightly matrix and its merge: actionlint finds nothing in it;
//   - in both, every `check` command names a real subcommand and only
//     flags it has (asked of the check binary of this checkout).
//
// Its tests may import the matrix package (the shard, seed and cells
// parsers), k8s.io/api, k8s.io/apimachinery, sigs.k8s.io/yaml and
// github.com/rhysd/actionlint; nothing imports deploy.
package deploy
