#pragma once
// The sibling's half of remote providers (issue 6): wraps a C++ object
// implementing domain::executor / domain::signer into an actor movegate can
// call (actors/protocol.hpp's remote_executor_actor / remote_signer_actor),
// to register with movement_client::register_executor / register_signer.
//
//   auto ex = mg::cluster::spawn_executor_actor(sys, std::make_shared<my_executor>());
//   client.register_executor("my_venue", ex); // {200, …}; 403 without scope admin
#include <caf/all.hpp>
#include <memory>

#include "actors/protocol.hpp"
#include "domain/executor.hpp"

namespace mg::cluster {

/// An actor that answers each call with the object's result as JSON, or
/// with an error carrying the exception's message. The calls run one at a
/// time in a detached worker (they may block on the network) behind a
/// scheduled front actor, the only one the middleman sees. It lives until
/// it is sent an exit, which also ends the worker; send one before the
/// actor system ends (its end waits for every actor). movegate forgets the
/// registration when it goes.
actors::remote_executor_actor spawn_executor_actor(caf::actor_system& sys,
                                                   std::shared_ptr<domain::executor> executor);

actors::remote_signer_actor spawn_signer_actor(caf::actor_system& sys,
                                               std::shared_ptr<domain::signer> signer);

} // namespace mg::cluster
