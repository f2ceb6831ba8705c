"""Refuse a model applied to data of another task: the input formats each task cannot take.

``cutplane predict`` and ``cutplane evaluate`` call :func:`check_input_format` before the
task's reader runs: a file that conclusively looks like another task's format
(:func:`problems.io.sniff.sniff_format`) is refused with one
:class:`~cutplane.exceptions.InputError` naming the model (file, task) and the file (its
format and first data line). What a task's reader refuses anyway stays with that reader, whose
message names the line; the shape checks of the linear tasks (labels, feature indices, index
base) are in :mod:`problems.linear.command`.
"""

from __future__ import annotations

from cutplane.exceptions import InputError

__all__ = ["REFUSED_FORMATS", "check_input_format", "refuse_feature_dict_model"]

#: Task -> (what its input is, the formats of :func:`~problems.io.sniff.sniff_format` it refuses).
#: A sequence model reads CoNLL / CRF++ columns and may have been trained on a CoNLL-U file's
#: columns; plain text is left to the readers (it is what a malformed file looks like).
REFUSED_FORMATS = {
    "binary": ("SVMlight files", ("conllu", "columns", "text")),
    "multiclass": ("SVMlight files", ("conllu", "columns", "text")),
    "sequence": ("CoNLL / CRF++ column files", ("svmlight",)),
    "segment": ("segmented text, one sentence per line", ("svmlight", "conllu", "columns")),
    "parse": ("CoNLL-U treebanks", ("svmlight",)),
}


def refuse_feature_dict_model(meta, model_path) -> None:
    """Raise when the model was fitted on feature dicts (``SequenceTagger(templates=None)``, its
    file's ``feature_dicts`` entry): the commands read columns of text, which hold no feature dicts.

    Raises
    ------
    InputError
        ``path`` the model file, ``field="--model"``.
    """
    if "feature_dicts" in meta:
        raise InputError(
            "this model was fitted on feature dicts (SequenceTagger(templates=None)); the command line reads "
            "columns of text, not feature dicts: load it in Python with SequenceTagger.load and predict on "
            "feature dicts",
            path=model_path,
            field="--model",
        )


def check_input_format(task_name, meta, model_path, input_path, encoding: str = "utf-8") -> None:
    """Raise when ``input_path`` conclusively looks like the input of another task than
    ``task_name`` (the model's), naming both.

    Raises
    ------
    InputError
        ``path`` the input file, ``line`` its first data line, ``field="format"``.
    """
    from problems.io.sniff import FORMAT_NAMES, sniff_format
    from problems.model_io import describe_model

    if task_name not in REFUSED_FORMATS:
        return
    expected, refused = REFUSED_FORMATS[task_name]
    found = sniff_format(input_path, encoding=encoding)
    if found.format in refused:
        raise InputError(
            f"this looks like {FORMAT_NAMES[found.format]} ({found.text!r}), but "
            f"{describe_model(model_path, meta)} reads {expected}: a model applies to data of its own task",
            path=input_path,
            line=found.line,
            field="format",
        )
