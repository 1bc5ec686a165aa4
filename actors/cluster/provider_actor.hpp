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

/// A detached actor (port calls may block on the network) that answers
/// each call with the object's result as JSON, or with an error carrying
/// the exception's message. It lives until the actor system ends or it is
/// sent an exit; movegate forgets the registration when it goes.
actors::remote_executor_actor spawn_executor_actor(caf::actor_system& sys,
                                                   std::shared_ptr<domain::executor> executor);

actors::remote_signer_actor spawn_signer_actor(caf::actor_system& sys,
                                               std::shared_ptr<domain::signer> signer);

} // namespace mg::cluster
