"""Model shapes for the speed model: bundled presets and the measurement file's models."""

from __future__ import annotations

from typing import Any

from gpudesk.speed.data import MeasuredModel, load_measurements
from gpudesk.workload.architecture import ModelShape, make_shape
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import ModelArchitecture, find_preset


def shape_from_preset(preset: ModelArchitecture | MeasuredModel) -> ModelShape:
    """The :class:`ModelShape` of a transformer preset.

    Raises:
        PlanningInputError: the preset is not a transformer (a CNN or UNet has no tokens).
    """
    if isinstance(preset, ModelArchitecture):
        if preset.shape is None:
            raise PlanningInputError(f"{preset.name} is not a transformer: no tokens to time")
        return preset.shape
    fields: dict[str, Any] = {}
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab"):
        value = getattr(preset, name)
        if value is None:
            raise PlanningInputError(f"{preset.name} is not a transformer: no tokens to time")
        fields[name] = value
    fields["context"] = preset.context
    fields["tied_embeddings"] = preset.tied_embeddings
    fields["gated_mlp"] = preset.gated_mlp
    return make_shape(fields)


def shape_for(model_id: str) -> ModelShape:
    """A preset by id or name, or a model defined in the measurement file.

    Raises:
        PlanningInputError: no such model (the message lists the presets).
    """
    measured = load_measurements().model(model_id)
    if measured is not None:
        return shape_from_preset(measured)
    return shape_from_preset(find_preset(model_id))
