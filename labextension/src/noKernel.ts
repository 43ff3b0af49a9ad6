/**
 * A notebook without a code cell (the course's contents page, all Markdown) opens without
 * a kernel: no Python process in JupyterLab, no Pyodide in the offline site.
 *
 * JupyterLab starts a notebook's kernel once it has read the file, whatever the file holds.
 * The kernel preference (`ISessionContext.kernelPreference.shouldStart`) is the documented
 * way to say that a document starts none, but whether a notebook has code is known only
 * once its file is read. So this plugin, a widget extension of every notebook:
 *
 * 1. when the notebook's widget is made (before its file is read or its session context
 *    initialised: the document manager makes the widget first, then reads the file),
 *    holds the start back: `shouldStart: false`;
 * 2. once the file is read (`context.ready`), a notebook with a code cell gets its own
 *    preference back; one without keeps the hold, so the status bar says "No Kernel". A
 *    student who writes code there picks a kernel when they run it (or with Kernel > Change
 *    Kernel), as in any notebook without one. (A new notebook's file has no cell, but the
 *    notebook widget gives the empty model one code cell as it is made, and the cell is
 *    still there once the file is read: a new notebook starts its kernel as usual.);
 * 3. should the session context have read the held preference before step 2 (JupyterLab
 *    reads it after asking the server which sessions run, so not today), the kernel is
 *    started as JupyterLab would have started it: `startKernel()`, then the "Select
 *    Kernel" dialog if no kernel fits.
 *
 * So nothing rests on the order in which JupyterLab resolves its promises. The same rule,
 * in Python, keeps the offline site from starting Pyodide early for such a page
 * (course_site.lessons.LessonNeeds.kernel).
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISessionContextDialogs, type ISessionContext } from '@jupyterlab/apputils';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

/** Whether a notebook, as read from its file, has a code cell to run. */
export function hasCode(model: INotebookModel): boolean {
  return model.sharedModel.cells.some(cell => cell.cell_type === 'code');
}

/** The preference `preference` with `shouldStart` as `shouldStart` (absent if undefined). */
function withShouldStart(
  preference: ISessionContext.IKernelPreference,
  shouldStart: boolean | undefined
): ISessionContext.IKernelPreference {
  const { shouldStart: _old, ...rest } = preference;
  return shouldStart === undefined ? rest : { ...rest, shouldStart };
}

function holdKernelUntilRead(
  context: DocumentRegistry.IContext<INotebookModel>,
  dialogs: ISessionContext.IDialogs | null
): void {
  const session = context.sessionContext;
  const wanted = session.kernelPreference.shouldStart;
  if (context.isReady || session.session || wanted === false) {
    // another view of a notebook already open, or one that starts no kernel anyway
    return;
  }
  session.kernelPreference = withShouldStart(session.kernelPreference, false);
  context.ready
    .then(() => {
      if (context.isDisposed || session.isDisposed || !hasCode(context.model)) {
        return;
      }
      session.kernelPreference = withShouldStart(session.kernelPreference, wanted);
      if (session.isReady && !session.session) {
        // the session context decided with the held preference (step 3 above)
        void session.startKernel().then(select => {
          if (select && dialogs && !session.isDisposed) {
            void dialogs.selectKernel(session);
          }
        });
      }
    })
    .catch(() => {
      // the file could not be read: the document manager says so and closes the notebook
    });
}

export const noKernelWithoutCode: JupyterFrontEndPlugin<void> = {
  id: 'attention-course-lab:no-kernel-without-code',
  description: 'A notebook of Markdown only opens without a kernel.',
  autoStart: true,
  optional: [ISessionContextDialogs],
  activate: (
    app: JupyterFrontEnd,
    dialogs: ISessionContext.IDialogs | null
  ): void => {
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (
        _panel: NotebookPanel,
        context: DocumentRegistry.IContext<INotebookModel>
      ) => holdKernelUntilRead(context, dialogs)
    });
  }
};
