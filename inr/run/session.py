"""One command of the CLI from its parsed config to its end: checks, the checkpoint it reads, the run's lock,
signals, the Trainer call of the subcommand, and how it ends (a summary line, or one line and an exit code).

``fit`` trains (new run, or a resume: ``inr.run.resume``); ``validate`` and ``test`` score a checkpoint on
the held-out split (``val/...``, ``test/...``); ``predict`` renders a checkpoint's field to files
(``inr.run.predictions``). Each writes into a run directory of the configured logger that it
creates, like a new run, and removes it again when it fails before writing results.

Each records what made it (``run.json``: ``inr.run.record``) beside its ``config.yaml``. ``fit``'s closing
evaluation runs on the device the run trained on, and its metrics, like validate's and test's scores, reach
every logger and ``metrics.json`` (``inr.callbacks.closing``) before the loggers are closed.
"""

from __future__ import annotations

import math
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Optional

import yaml
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities import rank_zero_only

from inr.callbacks.closing import HeldLoggers, config_hparams, hold_loggers, log_closing_metrics, write_metrics
from inr.callbacks.media import latest_reconstruction
from inr.data.cameras import MAX_CAMERA_PATH_POSES, read_camera_path
from inr.errors import EXIT_FAILED, EXIT_INPUT, InputError, check_memory
from inr.io.progress import reporting
from inr.io.run_dir import logger_root, tracker_artifact_dir
from inr.run.checkpoints import AtomicCheckpointIO, CheckpointError, last_good_checkpoint
from inr.run.cluster import Start, bound_the_join, check_launch, say_everywhere
from inr.run.lock import LOCK_NAME, RunLock
from inr.run.preflight import (
    check_output_location,
    check_paths_inside_run,
    check_trainer_settings,
    check_writable,
    preflight,
)
from inr.run.record import RECORD_NAME, RunRecorder
from inr.run.requeue import enabled as requeue_enabled
from inr.run.requeue import job_id, requeue, requeued_checkpoint, write_record
from inr.run.resume import (
    ResumePlan,
    RunConfigRecorder,
    logger_factory,
    model_section,
    plan_evaluation,
    plan_resume,
    run_dir,
)
from inr.run.signals import REQUEUE_SIGNAL, GracefulStop, RunInterrupted

SUBCOMMANDS = ("fit", "validate", "test", "predict")


@rank_zero_only
def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def resume_command(program: str, args: list[str], checkpoint: str) -> str:
    """The command that resumes from ``checkpoint``: this one's arguments with its ``--ckpt_path`` replaced."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--ckpt_path":
            skip = True
        elif not arg.startswith("--ckpt_path="):
            kept.append(arg)
    return shlex.join([*shlex.split(program), *kept, "--ckpt_path", checkpoint])


def install_atomic_checkpoints(cli: LightningCLI) -> None:
    """Checkpoints are written atomically and read as data only (by rank 0, for every rank), unless a config chose
    its own CheckpointIO."""
    strategy = cli.trainer.strategy
    if type(strategy.checkpoint_io) is TorchCheckpointIO:
        strategy.checkpoint_io = AtomicCheckpointIO(strategy)  # several ranks: rank 0 reads, the others receive


def render_shape(
    data_shape: tuple[int, ...], shape: Optional[list[int]], scale: Optional[float], fixed: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The grid ``predict`` renders: ``shape`` as given, else the data's grid times ``scale`` (rounded); the
    axes in ``fixed`` (a radiance field's views) keep the data's size.

    Example:
        >>> render_shape((256, 256), None, 4.0), render_shape((8, 64, 64), [16, 64, 64], None)
        ((1024, 1024), (16, 64, 64))
        >>> render_shape((8, 64, 64), None, 2.0, fixed=(0,))
        (8, 128, 128)
    """
    if shape is not None:
        if len(shape) != len(data_shape) or min(shape) < 1:
            raise InputError(
                f"--shape {shape}: give {len(data_shape)} sizes ≥ 1, one per axis of the data's grid {list(data_shape)}"
            )
        for axis in fixed:
            if shape[axis] != data_shape[axis]:
                raise InputError(
                    f"--shape {shape}: axis {axis} counts the data's {data_shape[axis]} views and cannot change; give {data_shape[axis]}"
                )
        return tuple(int(s) for s in shape)
    if scale is not None and not (scale > 0 and math.isfinite(scale)):
        raise InputError(f"--scale must be a finite number > 0, got {scale}")
    return tuple(s if axis in fixed else max(1, round(s * (scale or 1.0))) for axis, s in enumerate(data_shape))


# what Lightning's restore raises on state of the wrong shape or type (a key missing, a value of another type)
RESTORE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError)


def guard_restore(trainer: Any, checkpoint: str) -> None:
    """Lightning's restore of the checkpoint's callbacks, loops, optimizers and schedulers, with any failure
    turned into one line naming the checkpoint: state the structural check (``check_training_state``)
    cannot judge, such as a loop's counters of the wrong type, fails inside Lightning with a traceback."""
    connector = trainer._checkpoint_connector

    def guarded(restore):
        def run(*args, **kwargs):
            try:
                return restore(*args, **kwargs)
            except RESTORE_ERRORS as exc:
                if isinstance(exc, InputError):
                    raise
                raise CheckpointError(
                    f"{checkpoint}: its saved training state does not restore ({type(exc).__name__}: "
                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else 'no detail'}); resume from another checkpoint"
                ) from None

        return run

    for name in ("_restore_modules_and_callbacks", "restore_training_state"):
        setattr(connector, name, guarded(getattr(connector, name)))


def camera_path_shape(model: Any, data: Any, camera_path: Optional[str], frames: int) -> tuple[tuple[int, ...], Optional[float]]:
    """The grid a predict renders before ``--shape``/``--scale`` and the path's own frame rate (or None): the
    data's grid, or for a radiance field with ``--camera_path`` (orbit, spiral or a JSON file) one view per
    camera of the path (set as ``model.predict_camera_path``)."""
    shape = tuple(data.shape)
    if camera_path in (None, "views"):
        return shape, None
    if not hasattr(model, "predict_poses"):
        raise InputError(
            f"--camera_path {camera_path}: only a radiance field renders camera views; this model is a {type(model).__name__}"
        )
    if camera_path in ("orbit", "spiral"):
        if not 1 <= frames <= MAX_CAMERA_PATH_POSES:
            raise InputError(f"--frames must be between 1 and {MAX_CAMERA_PATH_POSES:,}, got {frames}")
        model.predict_camera_path = (camera_path, frames)
        return (frames, *shape[1:]), None
    path = read_camera_path(camera_path)  # its own image size and fields of view, when it gives them
    model.predict_camera_path = path
    return (len(path.poses), *(path.size or shape[1:])), path.fps


def place_checkpoints(trainer: Any) -> None:
    """Checkpoints in the run directory whatever the logger: Lightning's own rule puts those of an MLflow run on a
    database or server (no ``save_dir``) in ``<working directory>/<experiment>/<run id>/``; here they go into the
    run's artifact directory with its other files (``inr.io.run_dir``). A ``dirpath`` given in the config stays."""
    if tracker_artifact_dir(trainer.logger) is None:
        return
    for callback in trainer.checkpoint_callbacks:
        if isinstance(callback, ModelCheckpoint) and callback.dirpath is None:
            callback.dirpath = str(run_dir(trainer) / "checkpoints")


class Session:
    """One command: the CLI, the checkpoint plan, the run's lock and the signal handling, and how it ends."""

    def __init__(self, command: str, args: list[str], program: str = "python train.py", argv: Optional[list[str]] = None) -> None:
        self.command, self.args, self.program = command, args, program
        # the command as typed (run.json), else as this program with these arguments (a call from Python)
        self.argv = argv or [*shlex.split(program), *([command] if command != "fit" else []), *args]
        self.held: Optional[HeldLoggers] = None
        self.cli: Optional[LightningCLI] = None
        self.plan = ResumePlan()
        self.lock: Optional[RunLock] = None
        self.stop = GracefulStop()
        self.start: Optional[Start] = None  # how the ranks of a launcher start (inr.run.cluster)
        self.running = self.finished = self.created_run_dir = False
        self.writer: Any = None

    def run(self, build) -> Optional[LightningCLI]:
        """``build()`` parses the arguments into a LightningCLI (run=False); then the subcommand runs."""
        self.stop.install()
        self.cli = cli = build()
        if cli.config.get("print_config"):
            return cli
        trainer, model, data = cli.trainer, cli.model, cli.datamodule
        check_launch(trainer)
        bound_the_join(trainer)  # several processes wait minutes for each other, not half an hour, and say so
        self.start = start = Start.of(trainer)  # processes of a launcher: the process group now (inr.run.cluster)
        start.connect()
        install_atomic_checkpoints(cli)
        self.stop.watch(trainer)
        trainer.callbacks.append(self.stop)
        recorder = RunRecorder(self.argv, cli.config.get("seed_everything"))
        trainer.callbacks.append(recorder)
        place_checkpoints(trainer)
        # rank 0 chooses the checkpoint and the run directory; under a launcher the other ranks take its choice
        if self.command == "fit":
            preflight(trainer, model, data, writes=start.decides)
            make_logger = logger_factory(cli.config.get("trainer", {}).get("logger"), trainer.logger)
            model_config = model_section(cli.parser, cli.config)
            if start.decides:
                ckpt_path, notes = self.requeued(cli.config.get("ckpt_path"))
                self.plan = plan_resume(trainer, model, ckpt_path, make_logger, model_config)
                self.plan.notes[:0] = notes
            for callback in trainer.callbacks:
                if isinstance(callback, (RunConfigRecorder, RunRecorder)):
                    callback.resume_in_place = self.plan.in_place
        else:
            check_trainer_settings(trainer)
            if start.decides:
                check_output_location(trainer)
            check_paths_inside_run(trainer)
            model_config = model_section(cli.parser, cli.config)
            if start.decides:
                data_config = model_section(cli.parser, cli.config, "data")
                self.plan = plan_evaluation(trainer, model, cli.config.get("ckpt_path"), self.command, model_config, data_config)
            if self.command == "predict":
                self.prepare_predict()
        if rank_zero_only.rank == 0:  # DDP ranks > 0 are started by rank 0 or a launcher; rank 0 holds the lock
            existed = run_dir(trainer).exists()
            self.lock = RunLock(run_dir(trainer)).acquire()
            self.created_run_dir = not existed
        run = str(run_dir(trainer).absolute()) if start.decides else None
        self.plan.checkpoint, self.plan.step = start.agree(self.plan.checkpoint, self.plan.step, run)
        for note in [*self.plan.notes, *start.notes()]:
            say(f"note: {note}")
        say_everywhere(start.local_line())  # the log of another node says where its run is written
        if self.command != "predict":  # the loggers stay open for the closing metrics
            self.held = hold_loggers(trainer)
        start = time.perf_counter()
        self.running = True
        try:
            results = self.call_trainer()
        except SystemExit:  # Lightning's SIGTERMException, or its exit after a KeyboardInterrupt
            if self.stop.signum is None:
                raise
            self.stopped()
        self.running, self.finished = False, True
        self.summary(results, time.perf_counter() - start)
        return cli

    def requeued(self, ckpt_path: Optional[str]) -> tuple[Optional[str], list[str]]:
        """``--ckpt_path`` as given; without one, in a SLURM job that SIGUSR1 requeued (``inr.run.requeue``), the
        checkpoint it saved then, with a note."""
        if ckpt_path is not None:
            return ckpt_path, []
        found = requeued_checkpoint(logger_root(self.cli.trainer))
        if found is None:
            return None, []
        checkpoint, step = found
        return checkpoint, [f"SLURM job {job_id()} was requeued at step {step}: resuming from {checkpoint}"]

    def prepare_predict(self) -> None:
        """The render grid and the writer, checked before anything runs: shape, memory, video format."""
        from inr.export.render import check_frame_folder, choose_video
        from inr.run.predictions import FieldWriter, field_kind

        config, data, model = self.cli.config, self.cli.datamodule, self.cli.model
        video = choose_video(config.get("video") or "auto")
        fps = config.get("fps")
        if fps is not None and not (fps > 0 and math.isfinite(fps)):  # 0 would silently become the default
            raise InputError(f"--fps must be a finite number > 0, got {fps}")
        if config.get("out") is not None:
            check_writable(Path(config.get("out")), "--out")
        data.setup("predict")
        if config.get("video") in (None, "auto") and video == "gif" and data.ndim == 3:
            self.plan.notes.append("without the video extra (pip install av) predict writes a GIF instead of an MP4")
        member, members = config.get("member"), getattr(model, "members", None)
        if member is not None and (members is None or not 0 <= member < members):
            held = f"members 0..{members - 1}" if members else "no members (model.members)"
            raise InputError(f"--member {member}: the model holds {held}")
        if members is not None:
            if member is None:
                raise InputError(f"predict: the model holds {members} members; choose one with --member k (0..{members - 1})")
            model.predict_member = member
        fixed = tuple(getattr(model, "predict_fixed_axes", ()))
        data_shape, path_fps = camera_path_shape(model, data, config.get("camera_path"), config.get("frames"))
        if path_fps is not None and "--fps" not in self.args:  # the camera path's own frame rate, unless one is given
            fps = path_fps
        shape = data.predict_shape = render_shape(data_shape, config.get("shape"), config.get("scale"), fixed)
        if config.get("out") is not None:  # refused before rendering: predict never deletes files it did not write
            check_frame_folder(Path(config.get("out")), field_kind(model, len(shape)))
        # the render on the device, its host copy, the display copy and its 8-bit frames (float32 values)
        check_memory(
            f"a render of {list(shape)} × {model.out_channels} channels",
            4 * model.out_channels * math.prod(shape) * 4,
            advice="choose a smaller --shape or --scale",
        )
        self.writer = FieldWriter(config.get("out"), video=video, fps=float(fps if fps is not None else 8.0))
        self.cli.trainer.callbacks.append(self.writer)

    def call_trainer(self) -> Any:
        trainer, model, data, ckpt = self.cli.trainer, self.cli.model, self.cli.datamodule, self.plan.checkpoint
        if ckpt is not None:
            guard_restore(trainer, ckpt)
        if self.command == "fit":
            return trainer.fit(model, datamodule=data, ckpt_path=ckpt, weights_only=True)
        if self.command == "predict":
            with reporting("predict: rendering"):
                return trainer.predict(model, datamodule=data, ckpt_path=ckpt, weights_only=True, return_predictions=False)
        run = trainer.validate if self.command == "validate" else trainer.test
        return run(model, datamodule=data, ckpt_path=ckpt, weights_only=True, verbose=False)

    @rank_zero_only
    def summary(self, results: Any, seconds: float) -> None:
        """One line: the closing metrics of ``fit``, the scores of ``validate``/``test``, the files of ``predict``."""
        trainer, where = self.cli.trainer, run_dir(self.cli.trainer)
        if self.command == "fit":
            print(
                f"closing evaluation: the final model on every point of the grid "
                f"({'×'.join(map(str, self.cli.datamodule.shape))}); Ctrl-C or SIGTERM stops it, the final checkpoint is written",
                file=sys.stderr,
                flush=True,
            )
            model = self.cli.model
            model.to(trainer.strategy.root_device)  # Lightning's teardown moved it to the CPU
            with reporting("closing evaluation"):
                metrics = model.evaluate()
            self.record_metrics(metrics, trainer.global_step)
            parts = [f"{k} {v:.4g}" for k, v in sorted(metrics.items())]
            picture = latest_reconstruction(where)
            shown = f" | reconstruction {picture}" if picture is not None else ""
            print(
                f"summary: {' | '.join(parts)} | {seconds:.1f} s | steps {trainer.global_step} | logs {where}{shown}", flush=True
            )
        elif self.command == "predict":
            shapes = ", ".join("×".join(map(str, s)) for s in self.writer.shapes)
            files = ", ".join(p.name + ("/" if p.is_dir() else "") for p in self.writer.written)
            print(
                f"predict: {shapes} from {self.plan.checkpoint} | {files} in {self.writer.output_dir} | {seconds:.1f} s",
                flush=True,
            )
        else:
            scores = {k: float(v) for r in results or [] for k, v in r.items()}
            self.record_metrics(scores, self.plan.step, logged=True)
            parts = [f"{k} {v:.4g}" for k, v in sorted(scores.items())]
            print(
                f"{self.command}: {' | '.join(parts)} | {self.plan.checkpoint} (step {self.plan.step}) | logs {where}", flush=True
            )

    def record_metrics(self, metrics: dict[str, float], step: int, logged: bool = False) -> None:
        """The closing metrics to every logger (``logged``: the Trainer logged them already) and ``metrics.json``;
        then the loggers close."""
        trainer = self.cli.trainer
        try:
            config = yaml.safe_load(self.cli.parser.dump(self.cli.config, skip_none=False)) or {}
        except Exception:  # a config jsonargparse cannot dump: the metrics without the hyper-parameters
            config = {}
        key = log_closing_metrics(trainer, metrics, config_hparams(config), step, logged=logged)
        record = {"command": self.command, "step": step, "headline": key}
        if self.command != "fit":
            record["checkpoint"] = self.plan.checkpoint
        write_metrics(run_dir(trainer), metrics, **record)
        if self.held is not None:
            self.held.release()

    # --- endings --------------------------------------------------------------------------------------
    def stopped(self) -> None:
        """Training stopped by a signal: one line with the checkpoint and the command that resumes it."""
        stop, trainer = self.stop, self.cli.trainer
        step = stop.step if stop.step is not None else trainer.global_step
        head = f"interrupted by {stop.name} at step {step}"
        if stop.saved and stop.signum == REQUEUE_SIGNAL and requeue_enabled(trainer):
            say(f"{head}: saved {stop.saved}; {self.requeue(stop.saved, step)}")
        elif stop.saved:
            say(f"{head}: saved {stop.saved}; resume with: {resume_command(self.program, self.args, stop.saved)}")
        elif stop.forced:
            say(f"{head}, twice: stopped without saving; {self._last_good()}")
        elif stop.save_error:
            say(f"{head}: could not save a checkpoint: {stop.save_error}; {self._last_good()}")
        else:
            say(f"{head}; {self._last_good()}")
        raise SystemExit(stop.exit_code)

    def requeue(self, checkpoint: str, step: int) -> str:
        """Rank 0 records the checkpoint for this SLURM job and requeues it; what happened, for the closing line."""
        if rank_zero_only.rank != 0:
            return ""
        write_record(run_dir(self.cli.trainer), checkpoint, step)
        done, detail = requeue()
        if done:
            return f"requeued SLURM job {job_id()} ({detail}); started again, it resumes from there"
        return f"{detail}; resume with: {resume_command(self.program, self.args, checkpoint)}"

    def _last_good(self) -> str:
        path = last_good_checkpoint(self.cli.trainer) if self.cli is not None else None
        if path is None and self.plan.checkpoint:
            path = self.plan.checkpoint
        if path is None:
            return "no checkpoint had been written"
        return f"the last good checkpoint is {path}; resume with: {resume_command(self.program, self.args, path)}"

    def interrupted(self, exc: RunInterrupted) -> None:
        """A signal outside the training loop: before training nothing is lost; after it, the final checkpoint stands."""
        name = self.stop.name
        if self.command != "fit":
            if not self.finished:
                self.cleanup()
            say(
                f"interrupted by {name} {'after' if self.finished else 'during'} {self.command}: "
                f"{'its results are written' if self.finished else 'nothing was written'}"
            )
        elif self.finished or self.stop.closing:
            say(f"interrupted by {name} after training's last step, during the closing evaluation; {self._last_good()}")
        else:
            self.cleanup()
            kept = f"; {self.plan.checkpoint} is unchanged" if self.plan.checkpoint else ""
            say(f"interrupted by {name} before training started: nothing was trained{kept}")
        raise SystemExit(self.stop.exit_code)

    def fail(self, message: str, code: int = EXIT_INPUT, everywhere: bool = False) -> None:
        """One line and ``code``; ``everywhere``: printed by this process whatever its rank (a fault of its own launch,
        which no rank 0 reports for it)."""
        if self.start is not None:  # before the start under a launcher: the other ranks stop too, not wait
            self.start.fail(message, code)
        self.cleanup()
        (say_everywhere if everywhere else say)(f"error: {message}")
        raise SystemExit(code)

    def failed_while_running(self, what: str, advice: str) -> None:
        """The environment stopped the command (disk full, out of memory): the checkpoints on disk are whole."""
        if self.command != "fit":
            self.fail(f"{what} during {self.command}; {advice}", EXIT_FAILED)
        step = self.cli.trainer.global_step if self.cli is not None else 0
        self.fail(f"{what} at step {step}; {advice}; {self._last_good()}", EXIT_FAILED)

    def cleanup(self) -> None:
        """Release the lock; drop a run directory this command created (never another's) and left without results."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.created_run_dir and self.cli.trainer.logger is not None:
            untrained = self.command != "fit" or self.cli.trainer.global_step == 0
            _remove_empty_run_dir(run_dir(self.cli.trainer), untrained)

    def close(self) -> None:
        if self.held is not None:  # a command that ended before its closing metrics: the loggers close now
            self.held.release()
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        self.stop.uninstall()


def _remove_empty_run_dir(path: Path, untrained: bool) -> None:
    """After a failure, drop a run directory that holds nothing but the saved config and the lock (and, when
    the failure came before the first step, e.g. in a task's ``setup``, the logger's still empty event file)."""
    disposable = lambda p: (
        p.name in ("config.yaml", "hparams.yaml", RECORD_NAME, LOCK_NAME)
        or (untrained and p.name.startswith("events.out.tfevents."))
    )
    if path.is_dir() and all(disposable(p) for p in path.iterdir()):
        shutil.rmtree(path, ignore_errors=True)
