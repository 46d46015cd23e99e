//! Services: each use case as one function that runs its checks and writes in one
//! transaction (events included) and returns wire types. Handlers only parse and call these.

pub mod contacts;
pub mod organizations;
pub mod webhooks;
