//! The endpoints that answer at once: bolt-server's `/ssh/*` (`bolt`, with
//! its request pieces in `targets` and the task checks in `tasks`), ACE's
//! `/check` and `/run_task` (`ace`), what the modulepath offers (`listing`:
//! `/tasks`, `/plans`, `/puppet/v3/file_content/...`), `/openapi.json`
//! (`openapi`, generated from the handlers' types), `/metrics`
//! (`metrics`), and Puppet's agent API (`puppet`: node, catalog, report,
//! facts, environments, status; `fileserver`: file metadata and content
//! for pluginsync and file sources; `ca`: the Puppet CA's bootstrap
//! endpoints, `/puppet-ca/v1`; `ca_admin`: its `certificate_status`
//! administration), and PE's node classifier API
//! (`classifier`: node groups, classification).

pub mod ace;
pub mod bolt;
pub mod ca;
pub mod ca_admin;
pub mod classifier;
pub mod fileserver;
pub mod listing;
pub mod metrics;
pub mod openapi;
pub mod puppet;
pub mod targets;
pub mod tasks;
