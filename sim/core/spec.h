/* spec.h -- the records of the GPU and model catalog: what a GPU offers and
 * what a model's geometry is (gpu_spec, model_spec).
 *
 * They are part of the public interface and defined in latsim/catalog.h; this
 * is their internal name.  core/catalog.h stores and looks them up;
 * core/hfcfg.h reads a model from a Hugging Face config.json.  Both include
 * this header, so that the reader of configs does not depend on the catalog
 * (the catalog builds its built-in models with it).
 */
#ifndef LATSIM_SPEC_H
#define LATSIM_SPEC_H

#include "latsim/catalog.h"

#endif
