"""Publishing and loading bias datasets on the Hugging Face Hub (a biaskit subpackage, not the HF library)."""
