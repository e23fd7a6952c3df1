#!/usr/bin/env bash
# Runs detached on the GPU machine: build llama.cpp (CUDA, sm_90), make the random-weight model, then
# the recording (record.sh). Everything lands in /tmp/w/res, progress.log first.
#   master.sh CHECKOUT     (CHECKOUT holds .gpu/ as scripts/gpu/bundle.sh made it)
# Environment: FA (on; off builds without FlashAttention: 2 min faster to build, launches about five
# times longer: never worth it), and what record.sh reads.
set -u
R=$1; W=/tmp/w; mkdir -p $W/res; cd $W
FA=${FA:-on}; export FA
log() { echo "$(date +%T) $*" >> $W/res/progress.log; }
log "start (FA $FA)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >> $W/res/progress.log 2>&1
nproc >> $W/res/progress.log
rm -rf $W/scripts; cp -r $R/.gpu/scripts $W/scripts
[ -d $W/llama.cpp ] || { tar xJf $R/.gpu/llama.tar.xz -C $W && log untarred; }
cp $R/.gpu/perfgate $W/perfgate && chmod +x $W/perfgate
mkdir -p $W/tok && cp $R/.gpu/tok/* $W/tok/
cuda_fa=ON; [ "$FA" = off ] && cuda_fa=OFF
[ -x $W/build/bin/llama-server ] || ( cmake -S $W/llama.cpp -B $W/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=$cuda_fa \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF > $W/res/cmake.log 2>&1 \
  && cmake --build $W/build --target llama-server -j "$(nproc)" > $W/res/build.log 2>&1
  echo "$(date +%T) build exit $?" >> $W/res/progress.log ) &
BP=$!
[ -f $W/model.gguf ] || { python3 $W/scripts/genmodel.py $W/hf $W/tok > $W/res/model.log 2>&1 && log "hf model ok" \
  && python3 $W/llama.cpp/convert_hf_to_gguf.py $W/hf --outtype f16 --outfile $W/model.gguf >> $W/res/model.log 2>&1; }
log "gguf exit $? $(ls -la $W/model.gguf 2>&1)"
wait $BP
[ -x $W/build/bin/llama-server ] || { log "NO llama-server"; exit 1; }
[ -f $W/model.gguf ] || { log "NO model"; exit 1; }
bash $W/scripts/record.sh $W >> $W/res/progress.log 2>&1
log "all done"
