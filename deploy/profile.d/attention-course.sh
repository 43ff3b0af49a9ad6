# The course's tools (nbgrader, the class's Python) in login shells of JupyterHub servers.
# Installed by deploy/jupyterhub_config.py as /etc/profile.d/attention-course.sh. A login
# shell (a JupyterLab terminal, `bash -l`) runs /etc/profile, which on Debian sets PATH anew
# and then reads this file: it puts back the folder the hub's spawner named. Shells outside
# a hub server have no ATTENTION_COURSE_BIN and are left as they are.
if [ -n "${ATTENTION_COURSE_BIN:-}" ] && [ -d "$ATTENTION_COURSE_BIN" ]; then
  case ":$PATH:" in
    *":$ATTENTION_COURSE_BIN:"*) ;;
    *) PATH="$ATTENTION_COURSE_BIN:$PATH"; export PATH ;;
  esac
fi
