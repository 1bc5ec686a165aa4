#pragma once
// The proof artifacts are pure JSON of provider answers (domain/step_proof);
// the workers that record them name the builders unqualified.
#include "domain/step_proof.hpp"

namespace mg::workers {

using domain::recover_proof_json;
using domain::step_proof_json;

} // namespace mg::workers
