//! Rendering the prompt that offers codecrew's tools to a model.
