# The course's own JupyterLab extensions in every student's server, loaded as `./course lab`
# loads them (--LabApp.extra_labextensions_path): every slider says its name and the value
# it shows to a screen reader; a notebook of Markdown only (the contents page) opens without
# a kernel. They are the folders of course_lib/labextension in the class's environment,
# where the course is installed (docs/deploy.md step 2; the single-user image on
# Kubernetes). Found without importing course_lib (its imports would slow every start).
import importlib.util
import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

course_lib = importlib.util.find_spec("course_lib")
if course_lib is None or not course_lib.submodule_search_locations:
    raise RuntimeError("the students' servers need the course installed in their Python "
                       "environment (no course_lib found): see docs/deploy.md, step 2")
c.LabApp.extra_labextensions_path = [
    os.path.join(next(iter(course_lib.submodule_search_locations)), "labextension")]
